/**
 * Maps byte offsets of a stream to 1-based line numbers (LF-terminated) while it passes through, keeping
 * only the chunks not yet looked past: queries must come in non-decreasing offset order.
 */
export class LineIndex {
  private readonly chunks: Buffer[] = [];
  private chunkStart = 0; // stream offset of chunks[0]
  private pos = 0; // stream offset counted up to
  private line = 1; // line at pos

  add(chunk: Buffer): void {
    if (chunk.length > 0) this.chunks.push(chunk);
  }

  /** Line of the byte at `offset`. */
  lineAt(offset: number): number {
    while (this.pos < offset) {
      const chunk = this.chunks[0];
      if (chunk === undefined) break;
      const end = this.chunkStart + chunk.length;
      const stop = Math.min(offset, end);
      for (
        let i = chunk.indexOf(10, this.pos - this.chunkStart);
        i !== -1 && this.chunkStart + i < stop;
        i = chunk.indexOf(10, i + 1)
      ) {
        this.line++;
      }
      this.pos = stop;
      if (stop === end) {
        this.chunks.shift();
        this.chunkStart = end;
      }
    }
    return this.line;
  }
}
