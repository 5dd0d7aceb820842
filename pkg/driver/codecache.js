// Written by cloakbrowser-mcp: a V8 code cache for playwright-core's two
// bundles (lib/coreBundle.js, lib/utilsBundle.js), preloaded into the
// driver's node with -r. Node 20 has no compile cache of its own
// (NODE_COMPILE_CACHE is Node 22's): the bundles are compiled here with
// vm.Script and the cache V8 made of them in an earlier run, and a run
// that found none (or one V8 refused: another node, other flags, another
// file) writes one a few seconds after it started, when the code it ran to
// start and to launch a browser is compiled too (or at its exit, if that
// comes first). The cache lives in code-cache/ beside this file, one file
// per bundle, node version and flags, with the bundle's source made one
// byte a character (.src, see oneByte); each is written whole (a temporary
// file, then rename). A file no start has taken for 30 days, and a
// temporary file a killed writer left, are removed. Anything that fails
// here leaves the bundle to node's own loader.
'use strict';
const Module = require('module');
const vm = require('vm');
const path = require('path');
const fs = require('fs');
const crypto = require('crypto');

const dir = path.join(__dirname, 'code-cache');
const pending = [];
const taken = [];
// A cache is V8's of what this preload compiled: another node, other flags
// or another version of this file (its name has its hash) make another
// cache. The preloads node was given are not flags: a new version of
// another preload keeps the cache (V8 refuses one made under flags that
// matter to it, and it is then written again).
const preloadArg = (a) => a === '-r' || a === '--require' || a.startsWith('--require=');
const flags = process.execArgv.filter((a, i, all) => !preloadArg(a) && !(i > 0 && (all[i - 1] === '-r' || all[i - 1] === '--require')));
const key = crypto.createHash('sha256').update(process.version + '\0' + flags.join(' ') + '\0' + path.basename(__filename)).digest('hex').slice(0, 12);
const compile = Module.prototype._compile;

// V8 keeps a script's source for as long as the script lives (it compiles
// functions from it lazily), two bytes a character if any is outside
// Latin-1: 23 comment lines of the bundles (1.64.1 has no such character
// elsewhere) make 13 MiB of the driver's heap out of 6.6. Each such
// character becomes its \u escape, which means the same character in a
// string, regular expression, identifier or a template's value, and in a
// comment changes only its text. A source where that could mean anything
// else (a line separator, which ends a comment; a backslash before such a
// character) is left as it is. The result is kept beside the code cache
// (.src, Latin-1): read, it is a one-byte string at once, where making it
// again takes about 10 ms a bundle.
const oneByte = (src) => {
  if (!/[^\x00-\xff]/.test(src) || /[\u2028\u2029]|\\[^\x00-\x7f]/.test(src)) return src;
  const ascii = src.replace(/[^\x00-\x7f]/g, (c) => '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0'));
  // replace builds a two-byte string from a two-byte one: decoded again
  // from bytes, it is one byte a character.
  return Buffer.from(ascii, 'latin1').toString('latin1');
};
const sources = [];

Module.prototype._compile = function (content, filename) {
  if (!/[\\/]lib[\\/](core|utils)Bundle\.js$/.test(filename)) return compile.call(this, content, filename);
  let script, file;
  try {
    const st = fs.statSync(filename);
    file = path.join(dir, path.basename(filename, '.js') + '-' + key + '-' + st.size + '-' + Math.floor(st.mtimeMs) + '.cache');
    const srcFile = file.slice(0, -'.cache'.length) + '.src';
    let source;
    try {
      source = fs.readFileSync(srcFile, 'latin1');
      taken.push(srcFile);
    } catch {
      source = oneByte(content);
      if (source !== content) sources.push([source, srcFile]);
    }
    let cachedData;
    try { cachedData = fs.readFileSync(file); } catch {}
    const opts = { filename, cachedData };
    if (vm.constants && vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER) opts.importModuleDynamically = vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER;
    script = new vm.Script(Module.wrap(source), opts);
    if (!cachedData || script.cachedDataRejected) pending.push([script, file]);
    else taken.push(file);
  } catch {
    return compile.call(this, content, filename);
  }
  const fn = script.runInThisContext({ displayErrors: true });
  return fn.call(this.exports, this.exports, Module.createRequire(filename), this, filename, path.dirname(filename));
};

// write puts data in file whole: a temporary file, then a rename.
const write = (file, data, encoding) => {
  const tmp = file + '.' + process.pid + '.tmp';
  try {
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(tmp, data, encoding);
    fs.renameSync(tmp, file);
  } catch {
    try { fs.unlinkSync(tmp); } catch {}
  }
};
const save = () => {
  for (const [source, file] of sources.splice(0)) write(file, source, 'latin1');
  for (const [script, file] of pending.splice(0)) write(file, script.createCachedData());
};
// A cache taken now is marked used (its mtime); one no start has taken
// for 30 days is for another node, other flags or an older bundle: it is
// removed, as is a temporary file older than a minute, left by a writer
// that died halfway (a write takes milliseconds).
const sweep = () => {
  const now = new Date();
  for (const f of taken.splice(0)) {
    try { fs.utimesSync(f, now, now); } catch {}
  }
  let names;
  try { names = fs.readdirSync(dir); } catch { return; }
  const age = { '.tmp': 60e3, '.cache': 30 * 24 * 3600e3, '.src': 30 * 24 * 3600e3 };
  for (const n of names) {
    const max = age[path.extname(n)];
    if (!max) continue;
    const f = path.join(dir, n);
    try { if (fs.statSync(f).mtimeMs < now - max) fs.unlinkSync(f); } catch {}
  }
};
// The bundles' sources as node read them and the caches read from disk
// are garbage once compiled (the compiled scripts keep copies of their own),
// but no full collection may come to free them for a long time: run one
// when the driver is likely idle.
const collect = () => {
  try {
    require('v8').setFlagsFromString('--expose-gc');
    vm.runInNewContext('gc')();
  } catch {}
};
const finish = () => { save(); sweep(); };
setTimeout(() => { finish(); collect(); }, 3000).unref();
process.once('exit', finish);
