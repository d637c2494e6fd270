// The inside of one sandbox worker thread. Plain JavaScript on purpose: sandbox workers are started
// often (after every memory or wall-clock kill) and tsx's loader would triple their start time and
// sit in the same realm as the deployed code. One job at a time; each job gets a fresh vm context.
//
// Messages in: { type: 'job', job }, { type: 'fetch-done', id, op, ok, value }.
// Out: { type: 'ready' }, { type: 'log', id, line }, { type: 'fetch', id, op, request },
// { type: 'fetch-abort', id, op }, { type: 'result', id, ok, value? (JSON text), error? { code, message },
// cpuMs, retire? }. Deployed code's fetches are made by the host (SandboxThread), through the
// platform's one egress guard; this thread never opens a socket for them.
import { readFileSync } from 'node:fs';
import v8 from 'node:v8';
import vm from 'node:vm';
import { parentPort } from 'node:worker_threads';
import { clip, contextFailure, refuseOutput, refuseRequest } from './context-boundary.mjs';

const MAX_PENDING_OPS = 256;
const MAX_LOG_LINES = 200;
const prelude = new vm.Script(readFileSync(new URL('./context-prelude.js', import.meta.url), 'utf8'), {
  filename: 'venus-sandbox-prelude.js',
});
const bufferBudget = new vm.Script(readFileSync(new URL('./context-buffer-budget.js', import.meta.url), 'utf8'), {
  filename: 'venus-sandbox-buffer-budget.js',
});
const startScript = new vm.Script('__venusStart(__venusEntry)', { filename: 'venus-sandbox-start.js' });
const dispatchScript = new vm.Script('__venusDispatch()', { filename: 'venus-sandbox-dispatch.js' });
const describeScript = new vm.Script('__venusDescribe(__venusError)', { filename: 'venus-sandbox-describe.js' });

/**
 * What one timed vm call costs before any sandbox code runs (vm starts a watchdog thread per call);
 * subtracted, so that functions that wait on many timers are not charged for our re-entries.
 */
const REENTRY_OVERHEAD_MS = calibrateOverhead();

/** The job now running; dynamic import() refusals need its context to build an in-context error. */
let current = null;

parentPort.on('message', (message) => {
  if (message?.type === 'job') void runJob(message.job);
  if (message?.type === 'fetch-done' && current?.job.id === message.id) {
    settleOp(current, message.op, message.ok, message.value);
  }
});

/**
 * The engine's own count of this isolate's array-buffer memory, which the V8 heap limit does not
 * cover. Checked at every crossing out of the sandbox and after every run of its code, against
 * what it was when the job started plus the job's budget (the prelude's precise per-allocation
 * charging is the first line; this one cannot be talked out of by code in the context). A job over
 * it fails with memory_limit and the thread is retired, so the memory goes with it.
 */
function externalMemory() {
  return v8.getHeapStatistics().external_memory;
}

function overExternalBudget(state) {
  if (state.done) return false;
  const used = externalMemory() - state.externalBase;
  if (used <= state.externalBudget) return false;
  fail(
    state,
    'memory_limit',
    `array buffers of ${Math.round(used / 2 ** 20)} MB exceed the function's ${state.job.limits.memoryMb} MB memory limit`,
    { retire: true },
  );
  return true;
}
parentPort.postMessage({ type: 'ready' });

async function runJob(job) {
  const state = {
    job,
    cpuMs: 0,
    done: false,
    ops: new Map(),
    events: [],
    reentryScheduled: false,
    logLines: 0,
    context: undefined,
    externalBase: externalMemory(),
    // Slack for buffers of the runtime itself (fetch bodies, vm internals) made during the job.
    externalBudget: job.limits.memoryMb * 1024 * 1024 + 16 * 1024 * 1024,
  };
  current = state;
  try {
    await execute(state);
  } catch (error) {
    fail(state, 'function_error', `sandbox failure: ${error?.message ?? String(error)}`);
  }
}

async function execute(state) {
  const { job } = state;
  const context = vm.createContext(Object.create(null), {
    name: `venus-fn:${job.meta.functionName}`,
    microtaskMode: 'afterEvaluate',
    codeGeneration: { strings: true, wasm: false },
  });
  state.context = context;
  const install = prelude.runInContext(context);
  install(
    (op, payload) => bridge(state, op, payload),
    JSON.stringify({
      fetch: job.grants.fetch.length > 0,
      env: job.env,
      arrayBufferBytes: job.limits.memoryMb * 1024 * 1024,
      maxOutputBytes: job.output.maxBytes,
      maxOutputDepth: job.output.maxDepth,
      meta: job.meta,
    }),
    bufferBudget.runInContext(context),
  );

  let module;
  try {
    module = new vm.SourceTextModule(job.source, {
      context,
      identifier: `venus-fn:${job.meta.functionName}.js`,
      importModuleDynamically: refuseImport,
    });
  } catch (error) {
    return fail(state, 'invalid_module', `the source does not compile: ${error?.message ?? String(error)}`);
  }
  if (job.mode === 'parse') return finish(state, { ok: true, value: 'null' });
  const imports = module.dependencySpecifiers;
  if (imports.length > 0) {
    return fail(
      state,
      'invalid_module',
      `imports are not available in the sandbox (found ${imports.map((s) => JSON.stringify(s)).join(', ')})`,
    );
  }
  // No dependencies, so the linker is never called.
  await module.link(() => {
    throw new Error('unreachable');
  });

  // With microtaskMode 'afterEvaluate' the promise evaluate() returns never settles on its own; the
  // module's status is final as soon as the call returns, unless it uses top-level await.
  // A vm timeout during evaluation rejects that promise (it does not throw), one turn later.
  let evaluationError;
  const started = performance.now();
  const evaluation = module.evaluate({ timeout: remainingCpu(state) }).then(
    () => {},
    (error) => {
      evaluationError = error;
    },
  );
  state.cpuMs += Math.max(0, performance.now() - started - REENTRY_OVERHEAD_MS);
  await Promise.race([evaluation, new Promise((resolve) => setImmediate(resolve))]);
  if (evaluationError?.code === 'ERR_SCRIPT_EXECUTION_TIMEOUT') {
    return fail(state, 'cpu_limit', `loading the module used more than its ${job.limits.cpuMs} ms of CPU time`);
  }
  if (module.status === 'errored') {
    context.__venusError = module.error;
    const described = runTimed(state, (timeout) => describeScript.runInContext(context, { timeout }));
    if (state.done) return;
    const { code, message } = JSON.parse(described.value);
    return fail(state, code === 'function_error' ? 'invalid_module' : code, `the module threw on load: ${message}`);
  }
  if (module.status !== 'evaluated') {
    return fail(state, 'invalid_module', 'top-level await is not supported in deployed modules');
  }
  const namespace = module.namespace;
  const entry =
    typeof namespace.default === 'function'
      ? namespace.default
      : typeof namespace.run === 'function'
        ? namespace.run
        : undefined;
  if (entry === undefined) {
    return fail(state, 'invalid_module', 'the module exports neither a default function nor `run`');
  }
  if (job.mode === 'check') return finish(state, { ok: true, value: 'null' });

  context.__venusEntry = entry;
  runTimed(state, (timeout) => startScript.runInContext(context, { timeout }));
  settleCheck(state);
}

/** Runs sandbox code under vm's timeout with what is left of the CPU budget; true if it ran out. */
function remainingCpu(state) {
  return Math.max(1, Math.ceil(state.job.limits.cpuMs - state.cpuMs));
}

function runTimed(state, body) {
  const timeout = remainingCpu(state);
  const started = performance.now();
  try {
    const value = body(timeout);
    return value === undefined ? false : { value };
  } catch (error) {
    if (error?.code === 'ERR_SCRIPT_EXECUTION_TIMEOUT') {
      fail(state, 'cpu_limit', `the function used more than its ${state.job.limits.cpuMs} ms of CPU time`);
      return true;
    }
    fail(state, 'function_error', `sandbox failure: ${error?.message ?? String(error)}`);
    return true;
  } finally {
    state.cpuMs += Math.max(0, performance.now() - started - REENTRY_OVERHEAD_MS);
    overExternalBudget(state);
  }
}

function calibrateOverhead() {
  const context = vm.createContext(Object.create(null));
  const empty = new vm.Script('0');
  const samples = [];
  for (let i = 0; i < 7; i++) {
    const started = performance.now();
    empty.runInContext(context, { timeout: 1000 });
    samples.push(performance.now() - started);
  }
  return samples.sort((a, b) => a - b)[3];
}

function refuseImport(specifier) {
  const context = current?.context;
  const message = `import() is not available in the sandbox (asked for ${JSON.stringify(String(specifier))})`;
  // An error made in the context's realm, never one of ours; the import promise settles through a
  // host job, so the caller gets a chance to re-enter and deliver it.
  if (current !== null) scheduleReentry(current);
  throw context === undefined ? new Error(message) : context.__venusCapabilityError(message);
}

function bridge(state, op, payload) {
  if (state.done || overExternalBudget(state)) return '';
  switch (op) {
    case 'log':
      if (state.logLines++ < MAX_LOG_LINES) {
        parentPort.postMessage({ type: 'log', id: state.job.id, line: clip(String(payload)) });
      }
      return '';
    case 'args':
      return state.job.args;
    case 'remaining':
      return String(Math.max(0, state.job.deadlineAt - Date.now()));
    case 'next':
      return state.events.shift() ?? '';
    case 'done': {
      const refused = refuseOutput(payload, state.job.output);
      if (refused === null) finish(state, { ok: true, value: payload });
      else fail(state, 'invalid_output', refused);
      return '';
    }
    case 'fail': {
      const { code, message } = contextFailure(payload);
      fail(state, code, message);
      return '';
    }
    case 'timer': {
      const { id, ms } = JSON.parse(payload);
      if (!admitOp(state)) return '';
      const handle = setTimeout(() => settleOp(state, id, true, null), ms);
      state.ops.set(id, () => clearTimeout(handle));
      return '';
    }
    case 'cancel': {
      const { id } = JSON.parse(payload);
      state.ops.get(id)?.();
      state.ops.delete(id);
      return '';
    }
    case 'fetch': {
      const { id, request } = JSON.parse(payload);
      if (!admitOp(state)) return '';
      const refused = refuseRequest(request);
      if (refused !== null) {
        state.ops.set(id, () => {});
        settleOp(state, id, false, JSON.stringify({ name: 'TypeError', message: refused }));
        return '';
      }
      const jobId = state.job.id;
      parentPort.postMessage({ type: 'fetch', id: jobId, op: id, request });
      state.ops.set(id, () => parentPort.postMessage({ type: 'fetch-abort', id: jobId, op: id }));
      return '';
    }
    default:
      return '';
  }
}

function admitOp(state) {
  if (state.ops.size < MAX_PENDING_OPS) return true;
  fail(state, 'function_error', `more than ${MAX_PENDING_OPS} timers and fetches pending at once`);
  return false;
}

function settleOp(state, id, ok, value) {
  if (state.done || !state.ops.has(id)) return;
  state.ops.delete(id);
  state.events.push(JSON.stringify({ id, ok, value }));
  scheduleReentry(state);
}

function scheduleReentry(state) {
  if (state.reentryScheduled) return;
  state.reentryScheduled = true;
  setImmediate(() => {
    state.reentryScheduled = false;
    if (state.done) return;
    runTimed(state, (timeout) => {
      dispatchScript.runInContext(state.context, { timeout });
    });
    settleCheck(state);
  });
}

/**
 * Nothing pending and no reply yet: give host-side settlements (an import() refusal) one more turn,
 * then the function's promise can never settle.
 */
function settleCheck(state) {
  if (state.done || state.ops.size > 0 || state.events.length > 0 || state.reentryScheduled) return;
  setImmediate(() => {
    if (state.done || state.ops.size > 0 || state.events.length > 0) return;
    runTimed(state, (timeout) => {
      dispatchScript.runInContext(state.context, { timeout });
    });
    if (state.done || state.ops.size > 0 || state.events.length > 0 || state.reentryScheduled) return;
    fail(state, 'no_result', 'the function returned a promise that can never settle (nothing left to wait for)');
  });
}

function fail(state, code, message, extra = {}) {
  finish(state, { ok: false, error: { code, message }, ...extra });
}

function finish(state, outcome) {
  if (state.done) return;
  state.done = true;
  for (const cancel of state.ops.values()) cancel();
  state.ops.clear();
  state.events.length = 0;
  if (current === state) current = null;
  parentPort.postMessage({ type: 'result', id: state.job.id, cpuMs: Math.round(state.cpuMs), ...outcome });
}
