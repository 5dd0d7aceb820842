// Written by cloakbrowser-mcp: a V8 code cache for playwright-core's two
// bundles (lib/coreBundle.js, lib/utilsBundle.js), preloaded into the
// driver's node with -r. Node 20 has no compile cache of its own
// (NODE_COMPILE_CACHE is Node 22's): the bundles are compiled here with
// vm.Script and the cache V8 made of them in an earlier run, and a run
// that found none (or one V8 refused: another node, other flags, another
// file) writes one a few seconds after it started, when the code it ran to
// start and to launch a browser is compiled too (or at its exit, if that
// comes first). The cache lives in
// code-cache/ beside this file, one file per bundle, node version and
// flags; it is written whole (a temporary file, then rename). A cache no
// start has taken for 30 days, and a temporary file a killed writer left,
// are removed. Anything that
// fails here leaves the bundle to node's own loader.
'use strict';
const Module = require('module');
const vm = require('vm');
const path = require('path');
const fs = require('fs');
const crypto = require('crypto');

const dir = path.join(__dirname, 'code-cache');
const pending = [];
const taken = [];
const key = crypto.createHash('sha256').update(process.version + '\0' + process.execArgv.join(' ')).digest('hex').slice(0, 12);
const compile = Module.prototype._compile;

Module.prototype._compile = function (content, filename) {
  if (!/[\\/]lib[\\/](core|utils)Bundle\.js$/.test(filename)) return compile.call(this, content, filename);
  let script, file;
  try {
    const st = fs.statSync(filename);
    file = path.join(dir, path.basename(filename, '.js') + '-' + key + '-' + st.size + '-' + Math.floor(st.mtimeMs) + '.cache');
    let cachedData;
    try { cachedData = fs.readFileSync(file); } catch {}
    const opts = { filename, cachedData };
    if (vm.constants && vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER) opts.importModuleDynamically = vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER;
    script = new vm.Script(Module.wrap(content), opts);
    if (!cachedData || script.cachedDataRejected) pending.push([script, file]);
    else taken.push(file);
  } catch {
    return compile.call(this, content, filename);
  }
  const fn = script.runInThisContext({ displayErrors: true });
  return fn.call(this.exports, this.exports, Module.createRequire(filename), this, filename, path.dirname(filename));
};

const save = () => {
  for (const [script, file] of pending.splice(0)) {
    const tmp = file + '.' + process.pid + '.tmp';
    try {
      fs.mkdirSync(dir, { recursive: true });
      fs.writeFileSync(tmp, script.createCachedData());
      fs.renameSync(tmp, file);
    } catch {
      try { fs.unlinkSync(tmp); } catch {}
    }
  }
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
  const age = { '.tmp': 60e3, '.cache': 30 * 24 * 3600e3 };
  for (const n of names) {
    const max = age[path.extname(n)];
    if (!max) continue;
    const f = path.join(dir, n);
    try { if (fs.statSync(f).mtimeMs < now - max) fs.unlinkSync(f); } catch {}
  }
};
const finish = () => { save(); sweep(); };
setTimeout(finish, 3000).unref();
process.once('exit', finish);
