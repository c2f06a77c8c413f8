/** A multiset: how many holders each value has; a value with none is absent. */
export class Counted<T> {
  readonly #n = new Map<T, number>();
  add(v: T): void {
    this.#n.set(v, (this.#n.get(v) ?? 0) + 1);
  }
  remove(v: T): void {
    const n = (this.#n.get(v) ?? 0) - 1;
    if (n > 0) this.#n.set(v, n);
    else this.#n.delete(v);
  }
  has(v: T): boolean {
    return this.#n.has(v);
  }
}
