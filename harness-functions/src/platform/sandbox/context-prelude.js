// Runs first inside every fresh sandbox context and evaluates to the function that installs the
// sandbox's globals. `bridge(op, payload)` is the only way out of the context: it takes and returns
// strings, so no object of the worker's realm (whose Function constructor would reach `process`)
// is ever handed to the deployed code. Everything here is strict so `caller` cannot be walked.
(function installSandboxGlobals(bridge, configJson, installBufferBudget) {
  const config = JSON.parse(configJson);
  const g = globalThis;
  const MAX_MESSAGE = 1000;

  const call = (op, payload) => {
    try {
      return bridge(op, payload);
    } catch {
      // Never rethrow the worker's own error object: it would hand over the worker realm.
      throw new Error(`sandbox bridge failed during ${op}`);
    }
  };

  class CapabilityError extends Error {
    constructor(message) {
      super(message);
      this.name = 'CapabilityError';
    }
  }
  class MemoryLimitError extends RangeError {
    constructor(message) {
      super(message);
      this.name = 'MemoryLimitError';
    }
  }

  const define = (name, value) =>
    Object.defineProperty(g, name, { value, writable: false, configurable: false, enumerable: false });
  const deny = (name, why) => {
    delete g[name];
    Object.defineProperty(g, name, {
      get() {
        throw new CapabilityError(`${name} is not available in the sandbox${why ? `: ${why}` : ''}`);
      },
      configurable: false,
      enumerable: false,
    });
  };

  const clip = (text) => (text.length > MAX_MESSAGE ? `${text.slice(0, MAX_MESSAGE)}…` : text);
  const format = (value) => {
    if (typeof value === 'string') return value;
    if (value instanceof Error) return `${value.name}: ${value.message}`;
    try {
      return JSON.stringify(value) ?? String(value);
    } catch {
      return String(value);
    }
  };
  const log = (...parts) => {
    call('log', clip(parts.map(format).join(' ')));
  };
  define('console', Object.freeze({ log, info: log, warn: log, error: log, debug: log, trace: log }));

  const describe = (error) => {
    let name = 'Error';
    let message = '';
    try {
      if (error !== null && typeof error === 'object') {
        name = String(error.name ?? 'Error');
        message = String(error.message ?? '');
      } else {
        message = String(error);
      }
    } catch {
      message = 'the thrown value could not be read';
    }
    const code =
      name === 'CapabilityError'
        ? 'capability_denied'
        : name === 'MemoryLimitError'
          ? 'memory_limit'
          : 'function_error';
    return JSON.stringify({ code, message: clip(code === 'function_error' ? `${name}: ${message}` : message) });
  };

  // Host operations that settle later (timers, fetches), by id. The worker re-enters through
  // __venusDispatch, inside vm's timeout, so their callbacks count against the CPU budget too.
  const pending = new Map();
  let nextId = 1;
  const begin = (op, payload, settle) => {
    const id = nextId++;
    pending.set(id, settle);
    call(op, JSON.stringify({ id, ...payload }));
    return id;
  };

  define('setTimeout', (callback, ms, ...args) => {
    if (typeof callback !== 'function') throw new TypeError('setTimeout needs a function');
    return begin('timer', { ms: Math.max(0, Number(ms) || 0) }, () => callback(...args));
  });
  define('clearTimeout', (id) => {
    if (pending.delete(id)) call('cancel', JSON.stringify({ id }));
  });
  define('queueMicrotask', (callback) => {
    // An exception in a microtask is uncaught, as in Node: it fails the invocation.
    Promise.resolve()
      .then(callback)
      .catch((error) => finish(false, error));
  });

  const headersOf = (init) => {
    const out = {};
    if (init === null || typeof init !== 'object') return out;
    const entries = Array.isArray(init) ? init : Object.entries(init);
    for (const [key, value] of entries) out[String(key).toLowerCase()] = String(value);
    return out;
  };
  const responseOf = (raw) => {
    const headers = Object.freeze({
      get: (name) => raw.headers[String(name).toLowerCase()] ?? null,
      has: (name) => String(name).toLowerCase() in raw.headers,
      entries: () => Object.entries(raw.headers)[Symbol.iterator](),
    });
    return Object.freeze({
      ok: raw.status >= 200 && raw.status < 300,
      status: raw.status,
      statusText: raw.statusText,
      url: raw.url,
      redirected: false,
      headers,
      text: () => Promise.resolve(raw.body),
      json: () => Promise.resolve().then(() => JSON.parse(raw.body)),
    });
  };
  if (config.fetch) {
    define('fetch', (input, init = {}) => {
      return new Promise((resolve, reject) => {
        const request = {
          url: String(typeof input === 'object' && input !== null && 'url' in input ? input.url : input),
          method: String(init.method ?? 'GET').toUpperCase(),
          headers: headersOf(init.headers),
          body: init.body === undefined || init.body === null ? null : String(init.body),
        };
        begin('fetch', { request }, (ok, value) => {
          if (ok) {
            resolve(responseOf(JSON.parse(value)));
            return;
          }
          const failure = JSON.parse(value);
          reject(
            failure.name === 'CapabilityError' ? new CapabilityError(failure.message) : new TypeError(failure.message),
          );
        });
      });
    });
  } else {
    deny('fetch', 'this function has no grants.fetch hosts');
  }

  for (const name of ['process', 'require', 'module', 'exports', 'Buffer', 'global', '__dirname', '__filename']) {
    deny(name, 'deployed functions get only args, ctx, console, timers and granted fetch');
  }
  for (const name of ['setInterval', 'clearInterval', 'setImmediate', 'clearImmediate']) deny(name, 'use setTimeout');
  for (const name of ['WebAssembly', 'SharedArrayBuffer', 'Atomics', 'XMLHttpRequest', 'WebSocket', 'Deno', 'Bun']) {
    deny(name);
  }

  // Array buffers are on a per-invocation budget: context-buffer-budget.js, run in this context.
  installBufferBudget(g, config.arrayBufferBytes, MemoryLimitError);
  const apply = Reflect.apply;

  // The reply is serialised here, inside the sandbox thread, and refused here if it is not plain
  // JSON, too deep or too large: a function, a Symbol or a 5,000-deep object must fail this
  // invocation with a code, not break a JSON.parse or a relay frame on the main thread later, and a
  // 150 MB string must never be copied out of the thread. The worker checks size and depth of
  // the text again (this code shares a realm with the deployed code, whose globals it can change).
  const stringify = JSON.stringify;
  const parents = new WeakMap();
  const weakGet = WeakMap.prototype.get;
  const weakSet = WeakMap.prototype.set;
  const pathOf = (holder, key) => {
    const keys = [key];
    for (let at = holder, i = 0; at !== undefined && i < 100; i++) {
      const link = apply(weakGet, parents, [at]);
      if (link === undefined) break;
      keys.push(link.key);
      at = link.holder;
    }
    let path = 'reply';
    for (let i = keys.length - 1; i >= 0; i--) if (keys[i] !== '') path += `.${keys[i]}`;
    return path;
  };
  class OutputError extends Error {}
  const serialise = (value) => {
    if (typeof value === 'string' && value.length > config.maxOutputBytes) {
      throw new OutputError(`the reply is larger than ${config.maxOutputBytes} bytes`);
    }
    let estimate = 0;
    const json = stringify(value, function replacer(key, item) {
      const kind = typeof item;
      if (kind === 'function' || kind === 'symbol' || kind === 'bigint') {
        throw new OutputError(`the reply is not JSON: ${pathOf(this, key)} is a ${kind}`);
      }
      if (kind === 'string') estimate += item.length;
      estimate += key.length + 4;
      if (estimate > config.maxOutputBytes) {
        throw new OutputError(`the reply is larger than ${config.maxOutputBytes} bytes`);
      }
      if (item !== null && kind === 'object') {
        const holderLink = apply(weakGet, parents, [this]);
        const depth = (holderLink?.depth ?? 0) + 1;
        if (depth > config.maxOutputDepth) {
          throw new OutputError(
            `the reply is nested deeper than ${config.maxOutputDepth} levels (at ${pathOf(this, key)})`,
          );
        }
        apply(weakSet, parents, [item, { holder: this, key, depth }]);
      }
      return item;
    });
    return json === undefined ? 'null' : json;
  };

  let finished = false;
  const finish = (ok, value) => {
    if (finished) return;
    finished = true;
    if (!ok) {
      call('fail', describe(value));
      return;
    }
    let json;
    try {
      json = serialise(value === undefined ? null : value);
    } catch (error) {
      const message = error instanceof OutputError ? error.message : `the reply is not JSON: ${format(error)}`;
      call('fail', stringify({ code: 'invalid_output', message: clip(message) }));
      return;
    }
    call('done', json);
  };

  define('__venusDescribe', describe);
  define('__venusDispatch', () => {
    for (;;) {
      const event = call('next', '');
      if (event === '') return;
      const { id, ok, value } = JSON.parse(event);
      const settle = pending.get(id);
      if (settle === undefined) continue;
      pending.delete(id);
      try {
        settle(ok, value);
      } catch (error) {
        finish(false, error);
      }
    }
  });
  define('__venusStart', (entry) => {
    const meta = config.meta;
    const ctx = Object.freeze({
      log,
      env: Object.freeze({ ...config.env }),
      functionName: meta.functionName,
      version: meta.version,
      workId: meta.workId,
      session: meta.session,
      remainingMs: () => Number(call('remaining', '')),
    });
    let result;
    try {
      result = entry(JSON.parse(call('args', '')), ctx);
    } catch (error) {
      finish(false, error);
      return;
    }
    Promise.resolve(result).then(
      (value) => finish(true, value),
      (error) => finish(false, error),
    );
  });
  define('__venusCapabilityError', (message) => new CapabilityError(message));
});
