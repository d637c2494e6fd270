/**
 * A minimal writer of ONNX model files (the `onnx.proto` protobuf), enough to emit small graphs of
 * standard operators with float32 / int64 initializers. No protobuf library is needed: the handful
 * of message types ONNX uses are encoded by hand (varints, length-delimited fields, fixed32).
 */

/** ONNX TensorProto.DataType values we emit. */
export const ONNX_FLOAT = 1;
export const ONNX_INT64 = 7;
export const ONNX_BOOL = 9;

export type AttributeValue = number | number[] | string | { int: number } | { ints: number[] } | OnnxTensor;

export interface OnnxTensor {
  name: string;
  dims: number[];
  dataType: typeof ONNX_FLOAT | typeof ONNX_INT64;
  data: Float32Array | BigInt64Array;
}

export interface OnnxNode {
  opType: string;
  inputs: string[];
  outputs: string[];
  name?: string;
  attributes?: Record<string, AttributeValue>;
}

/** A graph input or output: element type and a shape whose symbolic dimensions are strings. */
export interface OnnxValueInfo {
  name: string;
  elemType: number;
  shape: Array<number | string>;
}

export interface OnnxGraph {
  name: string;
  nodes: OnnxNode[];
  initializers: OnnxTensor[];
  inputs: OnnxValueInfo[];
  outputs: OnnxValueInfo[];
}

class ProtoWriter {
  private readonly parts: Uint8Array[] = [];
  private size = 0;

  private push(bytes: Uint8Array): void {
    this.parts.push(bytes);
    this.size += bytes.length;
  }

  private varint(value: bigint): void {
    // Negative int64 values are written as their 64-bit two's complement, as protobuf does.
    let v = value < 0n ? (1n << 64n) + value : value;
    const out: number[] = [];
    do {
      let byte = Number(v & 0x7fn);
      v >>= 7n;
      if (v > 0n) byte |= 0x80;
      out.push(byte);
    } while (v > 0n);
    this.push(Uint8Array.from(out));
  }

  private tag(field: number, wire: number): void {
    this.varint(BigInt((field << 3) | wire));
  }

  int(field: number, value: number | bigint): this {
    this.tag(field, 0);
    this.varint(BigInt(value));
    return this;
  }

  float(field: number, value: number): this {
    this.tag(field, 5);
    const b = new Uint8Array(4);
    new DataView(b.buffer).setFloat32(0, value, true);
    this.push(b);
    return this;
  }

  bytes(field: number, value: Uint8Array): this {
    this.tag(field, 2);
    this.varint(BigInt(value.length));
    this.push(value);
    return this;
  }

  string(field: number, value: string): this {
    return this.bytes(field, new TextEncoder().encode(value));
  }

  message(field: number, build: (w: ProtoWriter) => void): this {
    const inner = new ProtoWriter();
    build(inner);
    return this.bytes(field, inner.finish());
  }

  finish(): Uint8Array {
    const out = new Uint8Array(this.size);
    let at = 0;
    for (const p of this.parts) {
      out.set(p, at);
      at += p.length;
    }
    return out;
  }
}

function writeTensor(w: ProtoWriter, t: OnnxTensor): void {
  for (const d of t.dims) w.int(1, d);
  w.int(2, t.dataType);
  w.string(8, t.name);
  w.bytes(9, new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength));
}

function writeAttribute(w: ProtoWriter, name: string, value: AttributeValue): void {
  w.string(1, name);
  if (typeof value === 'string') w.int(20, 3).bytes(4, new TextEncoder().encode(value));
  else if (typeof value === 'number') w.int(20, 1).float(2, value);
  else if (Array.isArray(value)) {
    w.int(20, 6);
    for (const f of value) w.float(7, f);
  } else if ('int' in value) w.int(20, 2).int(3, value.int);
  else if ('ints' in value) {
    w.int(20, 7);
    for (const i of value.ints) w.int(8, i);
  } else w.int(20, 4).message(5, (t) => writeTensor(t, value));
}

function writeValueInfo(w: ProtoWriter, v: OnnxValueInfo): void {
  w.string(1, v.name);
  w.message(2, (type) =>
    type.message(1, (tensor) => {
      tensor.int(1, v.elemType);
      tensor.message(2, (shape) => {
        for (const d of v.shape) shape.message(1, (dim) => (typeof d === 'number' ? dim.int(1, d) : dim.string(2, d)));
      });
    }),
  );
}

/** Serialises a graph as an ONNX model (IR 8, default opset `opset`). */
export function encodeModel(graph: OnnxGraph, opset = 17, docString = ''): Uint8Array {
  const w = new ProtoWriter();
  w.int(1, 8);
  w.string(2, 'venus-tiny-bundle');
  w.string(3, '1');
  if (docString) w.string(6, docString);
  w.message(7, (g) => {
    for (const [i, n] of graph.nodes.entries())
      g.message(1, (node) => {
        for (const input of n.inputs) node.string(1, input);
        for (const output of n.outputs) node.string(2, output);
        node.string(3, n.name ?? `${n.opType}_${i}`);
        node.string(4, n.opType);
        for (const [name, value] of Object.entries(n.attributes ?? {}))
          node.message(5, (a) => writeAttribute(a, name, value));
      });
    g.string(2, graph.name);
    for (const t of graph.initializers) g.message(5, (m) => writeTensor(m, t));
    for (const v of graph.inputs) g.message(11, (m) => writeValueInfo(m, v));
    for (const v of graph.outputs) g.message(12, (m) => writeValueInfo(m, v));
  });
  w.message(8, (op) => op.string(1, '').int(2, opset));
  return w.finish();
}

/**
 * Builds a graph node by node with generated intermediate names.
 *
 * @example
 *   const g = new GraphBuilder('toy');
 *   const x = g.input('x', ONNX_FLOAT, ['batch', 4]);
 *   g.output(g.op('Relu', [x]), 'y', ONNX_FLOAT, ['batch', 4]);
 *   const bytes = encodeModel(g.graph);
 */
export class GraphBuilder {
  readonly graph: OnnxGraph;
  private counter = 0;

  constructor(name: string) {
    this.graph = { name, nodes: [], initializers: [], inputs: [], outputs: [] };
  }

  input(name: string, elemType: number, shape: Array<number | string>): string {
    this.graph.inputs.push({ name, elemType, shape });
    return name;
  }

  /** Renames `value` to the graph output `name` (an Identity node keeps every output name exact). */
  output(value: string, name: string, elemType: number, shape: Array<number | string>): void {
    this.graph.nodes.push({ opType: 'Identity', inputs: [value], outputs: [name] });
    this.graph.outputs.push({ name, elemType, shape });
  }

  floats(dims: number[], data: ArrayLike<number>, hint = 'w'): string {
    const name = `${hint}_${this.counter++}`;
    this.graph.initializers.push({ name, dims, dataType: ONNX_FLOAT, data: Float32Array.from(data) });
    return name;
  }

  ints(dims: number[], data: ArrayLike<number>, hint = 'c'): string {
    const name = `${hint}_${this.counter++}`;
    const values = BigInt64Array.from(Array.from(data, (v) => BigInt(v)));
    this.graph.initializers.push({ name, dims, dataType: ONNX_INT64, data: values });
    return name;
  }

  op(opType: string, inputs: string[], attributes?: Record<string, AttributeValue>, outputs = 1): string {
    const names = Array.from({ length: outputs }, () => `${opType.toLowerCase()}_${this.counter++}`);
    this.graph.nodes.push({ opType, inputs, outputs: names, ...(attributes ? { attributes } : {}) });
    return names[0]!;
  }
}
