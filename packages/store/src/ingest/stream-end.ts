/**
 * A chunk stream that says when it has ended — read to its end, failed, or given up by its
 * reader — even when it is given up before its first read: a generator's own `finally` does
 * not run then (`return()` on a generator that has not started completes it without running
 * its body), which left a worker ingesting a source nobody would read (a put refused for its
 * metadata) and holding the process for the pool's idle time.
 */
export function withEnd<T, R>(stream: AsyncGenerator<T, R, undefined>, end: () => void): AsyncGenerator<T, R, undefined> {
  let ended = false;
  const once = () => {
    if (ended) return;
    ended = true;
    end();
  };
  const settle = async <V>(step: Promise<V>, done: (v: V) => boolean): Promise<V> => {
    try {
      const v = await step;
      if (done(v)) once();
      return v;
    } catch (e) {
      once();
      throw e;
    }
  };
  const always = () => true;
  const wrapped: AsyncGenerator<T, R, undefined> = {
    next: () => settle(stream.next(), (r) => r.done === true),
    return: (value) => settle(stream.return(value as R), always),
    throw: (e) => settle(stream.throw(e), always),
    [Symbol.asyncIterator]: () => wrapped,
  };
  return wrapped;
}
