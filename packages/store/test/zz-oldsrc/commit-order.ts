/**
 * Puts that must commit in the order they were started (putFiles lists documents in input
 * order) and still share group commits: a put waits until every earlier one has *queued* its
 * commit (or failed), not until it has committed, so a whole window of puts joins one
 * transaction. Waiting for the commit itself gave each document its own transaction.
 */
export class CommitOrder {
  #tail: Promise<void> = Promise.resolve();

  /**
   * The next place in line: `turn` resolves when the earlier puts have queued; call `done`
   * once this one has (or failed). A put that fails early still releases the next one only
   * after its own turn: the puts before it may not have queued yet.
   */
  next(): CommitTurn {
    const turn = this.#tail;
    let done!: () => void;
    const mine = new Promise<void>((resolve) => (done = resolve));
    this.#tail = turn.then(() => mine);
    return { turn, done };
  }
}

export interface CommitTurn {
  turn: Promise<void>;
  done: () => void;
}
