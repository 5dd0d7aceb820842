// Written by cloakbrowser-mcp: hands Playwright's first browser launch the
// browser the server is about to launch, started while playwright-core
// loads; preloaded into the driver's node with -r before anything else (see
// prelaunch.go). The plan names the argv the last launch of the same options
// ran (its placeholders filled in) and the environment the launch will pass.
// The server has started that browser itself (early_linux.go) and node
// adopts it (adopt: its DevTools pipe and stderr are FIFOs); should the
// server not have, node starts it here. Playwright's launch takes that
// process only if it spawns exactly it: the same binary, argv, environment
// and process options (detached, five pipes). Anything else kills it first,
// and the argv Playwright spawned is kept, as a template, for the next
// start. A process no launch took is killed after a minute or when node
// exits; if node is killed, the closed DevTools pipe ends it.
'use strict';
const fs = require('fs');
const path = require('path');

const file = process.env.CLOAKBROWSER_MCP_DRIVER_PRELAUNCH;
delete process.env.CLOAKBROWSER_MCP_DRIVER_PRELAUNCH;
let plan = null;
if (file) {
  try { plan = JSON.parse(fs.readFileSync(file, 'utf8')); } catch {}
  try { fs.unlinkSync(file); } catch {}
}
// adopt stands for the child process of a browser the server started
// (early_linux.go): what Playwright's launch uses of one. Its DevTools pipe
// and stderr are FIFOs node opens by name; the end of the pipe it reads is
// the browser's exit (the server reaps it), reported as Playwright's own
// child would (no exit status: 0).
function adopt(a) {
  const net = require('net');
  const { EventEmitter } = require('events');
  const { PassThrough } = require('stream');
  const toBrowser = fs.openSync(a.in, 'w');
  const fromBrowser = fs.openSync(a.out, 'r');
  const stderrFd = fs.openSync(a.err, 'r');
  const child = new EventEmitter();
  const w = new net.Socket({ fd: toBrowser, readable: false, writable: true });
  const r = new net.Socket({ fd: fromBrowser, readable: true, writable: false });
  const stderr = new net.Socket({ fd: stderrFd, readable: true, writable: false });
  const stdout = new PassThrough();
  for (const s of [w, r, stderr]) s.on('error', () => {});
  Object.assign(child, { pid: a.pid, killed: false, exitCode: null, signalCode: null, stdin: null, stdout, stderr, stdio: [null, stdout, stderr, w, r] });
  child.kill = (signal) => {
    try { process.kill(a.pid, signal || 'SIGTERM'); child.killed = true; return true; } catch { return false; }
  };
  // After the pipe's own close handlers (Playwright's transport), as a
  // child's exit follows the end of its pipes.
  r.once('close', () => setImmediate(() => {
    child.exitCode = 0;
    w.destroy();
    stdout.end();
    stderr.destroy();
    child.emit('exit', 0, null);
    child.emit('close', 0, null);
  }));
  return child;
}

if (plan && plan.record) {
  const cp = require('child_process');
  const spawn = cp.spawn;
  const pipes = ['ignore', 'pipe', 'pipe', 'pipe', 'pipe'];
  let early = null;
  if (plan.adopt) {
    try { early = adopt(plan.adopt); } catch { early = null; }
  } else if (plan.command) {
    try {
      early = spawn(plan.command, plan.args, { detached: true, env: plan.env, stdio: pipes });
      early.on('error', () => {});
      if (!early.pid) early = null;
    } catch { early = null; }
  }
  const drop = () => {
    if (!early) return;
    try { process.kill(-early.pid, 'SIGKILL'); } catch {}
    early = null;
  };
  process.once('exit', drop);
  const timer = setTimeout(drop, 60e3);
  timer.unref();

  const sameEnv = (a, b) => {
    if (!a || !b) return false;
    const ka = Object.keys(a), kb = Object.keys(b);
    return ka.length === kb.length && ka.every((k) => Object.prototype.hasOwnProperty.call(b, k) && String(a[k]) === String(b[k]));
  };
  const isLaunch = (o) => o && Array.isArray(o.stdio) && o.stdio.length === pipes.length && o.stdio.every((s, i) => s === pipes[i]);
  const same = (command, args, o) => command === plan.command && o.detached === true && !o.shell && o.cwd === undefined &&
    Array.isArray(args) && args.length === plan.args.length && args.every((a, i) => a === plan.args[i]) && sameEnv(o.env, plan.env);
  // The argv as a template: each value of a placeholder, longest first,
  // replaced by its placeholder.
  const template = (args) => {
    const vars = Object.entries(plan.vars || {}).filter(([, v]) => v).sort((a, b) => b[1].length - a[1].length);
    return args.map((a) => vars.reduce((s, [k, v]) => s.split(v).join(k), String(a)));
  };
  const keep = (command, args) => {
    const tmp = plan.record + '.' + process.pid + '.tmp';
    try {
      fs.mkdirSync(path.dirname(plan.record), { recursive: true });
      fs.writeFileSync(tmp, JSON.stringify({ command, args: template(args) }), { mode: 0o600 });
      fs.renameSync(tmp, plan.record);
    } catch {
      try { fs.unlinkSync(tmp); } catch {}
    }
  };

  cp.spawn = function (command, args, options) {
    if (!isLaunch(options)) return spawn.apply(this, arguments);
    // The first browser launch: from here on spawn is node's own again.
    cp.spawn = spawn;
    clearTimeout(timer);
    process.off('exit', drop);
    if (early && early.exitCode === null && early.signalCode === null && same(command, args, options)) {
      const child = early;
      early = null;
      return child;
    }
    drop();
    keep(command, args || []);
    return spawn.apply(this, arguments);
  };
}
