/**
 * Splits a child's output into lines and hands each on with its name in front, so the logs of
 * every process of the cluster can be read on one terminal. Memory: at most `maxLineChars` of an
 * unfinished line are held; a longer line is passed on in pieces of that size.
 *
 * @example
 *   const lines = new PrefixedLines('gpu-worker-1', (line) => process.stdout.write(`${line}\n`));
 *   child.stdout.setEncoding('utf8').on('data', (chunk) => lines.push(chunk));
 *   child.stdout.on('end', () => lines.end());
 */
export class PrefixedLines {
  readonly #prefix: string;
  readonly #out: (line: string) => void;
  readonly #max: number;
  #partial = '';

  constructor(name: string, out: (line: string) => void, maxLineChars = 64 * 1024) {
    this.#prefix = `[${name}] `;
    this.#out = out;
    this.#max = maxLineChars;
  }

  push(chunk: string): void {
    let text = this.#partial + chunk;
    let newline = text.indexOf('\n');
    while (newline !== -1) {
      this.#emit(text.slice(0, newline));
      text = text.slice(newline + 1);
      newline = text.indexOf('\n');
    }
    while (text.length >= this.#max) {
      this.#emit(text.slice(0, this.#max));
      text = text.slice(this.#max);
    }
    this.#partial = text;
  }

  /** The stream ended: what is left of an unfinished last line goes out too. */
  end(): void {
    if (this.#partial !== '') this.#emit(this.#partial);
    this.#partial = '';
  }

  #emit(line: string): void {
    this.#out(this.#prefix + line.replace(/\r$/, ''));
  }
}
