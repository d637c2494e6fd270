// Runs in every fresh sandbox context right after context-prelude.js and before any deployed code,
// and evaluates to the function that puts the context's array buffers on a per-invocation budget.
// The prelude calls it with its global object, the budget in bytes and its MemoryLimitError (the
// error's name is what the prelude reports as memory_limit).
(function installBufferBudget(g, budgetBytes, MemoryLimitError) {
  // Array buffers live outside the V8 heap, so the worker's heap limit does not see them (measured:
  // twenty 50 MB buffers fit in a 64 MB-heap worker). Every way to make a new buffer draws on a
  // per-invocation budget: the constructors, and the built-in methods that allocate a fresh buffer
  // through the realm's own intrinsics (ArrayBuffer.prototype.slice, %TypedArray%.prototype.slice,
  // map, filter, ... when `constructor` is unset, species falls back to the unwrapped intrinsic).
  // Each buffer is charged once, when it first appears; the engine-side check in the worker
  // (external memory after every bridge call) catches whatever this layer misses.
  // Everything the charging path calls is captured here, so deployed code that replaces
  // Reflect.apply, WeakSet.prototype.has or a byteLength getter cannot make a buffer look free.
  const apply = Reflect.apply;
  const construct = Reflect.construct;
  const defineProperty = Object.defineProperty;
  const getOwnPropertyDescriptor = Object.getOwnPropertyDescriptor;
  const getPrototypeOf = Object.getPrototypeOf;
  const toNumber = Number;
  const charged = new WeakSet();
  const weakHas = WeakSet.prototype.has;
  const weakAdd = WeakSet.prototype.add;
  const OriginalArrayBuffer = ArrayBuffer;
  const getter = (object, name) => getOwnPropertyDescriptor(object, name)?.get;
  const abByteLength = getter(OriginalArrayBuffer.prototype, 'byteLength');
  const abMaxByteLength = getter(OriginalArrayBuffer.prototype, 'maxByteLength');
  const abResizable = getter(OriginalArrayBuffer.prototype, 'resizable');
  const TypedArrayPrototype = getPrototypeOf(Uint8Array.prototype);
  const taBuffer = getter(TypedArrayPrototype, 'buffer');
  const taByteLength = getter(TypedArrayPrototype, 'byteLength');

  let budget = budgetBytes;
  const limitError = (bytes) =>
    new MemoryLimitError(`array buffer allocation of ${bytes} bytes exceeds the function's memory limit`);
  /** Refuses before allocating when the size is known up front. */
  const precheck = (bytes) => {
    if (!(bytes >= 0) || bytes > budget) throw limitError(bytes);
  };
  const chargeBuffer = (buffer) => {
    if (apply(weakHas, charged, [buffer])) return;
    apply(weakAdd, charged, [buffer]);
    const bytes =
      abResizable !== undefined && apply(abResizable, buffer, [])
        ? apply(abMaxByteLength, buffer, [])
        : apply(abByteLength, buffer, []);
    if (bytes > budget) {
      budget = 0;
      throw limitError(bytes);
    }
    budget -= bytes;
  };
  const chargeView = (view) => chargeBuffer(apply(taBuffer, view, []));
  // Built-in attributes (writable, configurable): replacing a wrapper only loses the original.
  const replace = (object, name, value) =>
    defineProperty(object, name, { value, writable: true, configurable: true, enumerable: false });

  const wrapConstructor = (Original, bytesFor, chargeResult) => {
    const wrapped = new Proxy(Original, {
      construct(target, args, newTarget) {
        precheck(bytesFor(args, target));
        const made = construct(target, args, newTarget === wrapped ? target : newTarget);
        chargeResult(made);
        return made;
      },
      apply(target) {
        throw new TypeError(`Constructor ${target.name} requires 'new'`);
      },
    });
    replace(Original.prototype, 'constructor', wrapped);
    defineProperty(g, Original.name, { value: wrapped, writable: true, configurable: true, enumerable: false });
  };
  /** A built-in that may return a fresh buffer (or a view of one): charged after, bounded before. */
  const wrapMethod = (object, name, boundFor, chargeResult) => {
    const original = object[name];
    if (typeof original !== 'function') return;
    const wrapped = {
      [name](...args) {
        precheck(boundFor(this));
        const made = apply(original, this, args);
        chargeResult(made);
        return made;
      },
    }[name];
    replace(object, name, wrapped);
  };

  wrapConstructor(
    OriginalArrayBuffer,
    (args) => {
      const length = toNumber(args[0]) || 0;
      const max = args[1] !== null && typeof args[1] === 'object' ? toNumber(args[1].maxByteLength) || 0 : 0;
      // biome-ignore lint/complexity/useMathMinMax: deployed code can replace Math.max; this must not call it
      return length > max ? length : max;
    },
    chargeBuffer,
  );
  const ownBytes = (buffer) => {
    try {
      return apply(abByteLength, buffer, []);
    } catch {
      return 0; // not an ArrayBuffer: the built-in throws its own TypeError
    }
  };
  for (const name of ['slice', 'transfer', 'transferToFixedLength']) {
    wrapMethod(OriginalArrayBuffer.prototype, name, ownBytes, chargeBuffer);
  }
  const typedArrays = [
    Int8Array,
    Uint8Array,
    Uint8ClampedArray,
    Int16Array,
    Uint16Array,
    Int32Array,
    Uint32Array,
    Float32Array,
    Float64Array,
    BigInt64Array,
    BigUint64Array,
  ];
  for (const TypedArray of typedArrays) {
    wrapConstructor(
      TypedArray,
      (args, target) => {
        const first = args[0];
        if (typeof first === 'number') return first * target.BYTES_PER_ELEMENT;
        if (first !== null && typeof first === 'object') {
          if (apply(weakHas, charged, [first])) return 0; // a view over memory already charged
          const length = toNumber(first.length) || 0;
          return length * target.BYTES_PER_ELEMENT;
        }
        return 0;
      },
      chargeView,
    );
  }
  const viewBytes = (view) => {
    try {
      return apply(taByteLength, view, []);
    } catch {
      return 0;
    }
  };
  // Same-type results are at most as large as the source; a species constructor of another type
  // is one of the wrapped constructors above and precharges itself.
  for (const name of ['slice', 'map', 'filter', 'subarray', 'toReversed', 'toSorted', 'with']) {
    wrapMethod(TypedArrayPrototype, name, viewBytes, chargeView);
  }
  const TypedArray = getPrototypeOf(Uint8Array);
  for (const name of ['from', 'of']) wrapMethod(TypedArray, name, () => 0, chargeView);
});
