/**
 * Key files (FORMAT.md §17.2, decision 0062): an encrypted store's master key, wrapped once per
 * password by a key that Argon2id derives from the password, each in its own object
 * `keys/<16 hex>` beside the store's other objects (a bucket's, or a store directory's through
 * the directory object store). Files are created whole and never replaced: adding a password
 * adds a file, changing one adds a file and removes the old, and a removal holds `keys-lock`
 * so that two removers can never leave the store without a key.
 */
import { CorruptDataError, InvalidInputError, KEY_BYTES, argon2id, randomBytes, seal, toHex, unseal, type KdfParams } from '@kura/core';
import { NotFoundError, WrongPasswordError } from '../errors.js';
import { listAll, type ObjectStore } from '../objects/object-store.js';

export const KEYS_PREFIX = 'keys/';
export const KEYS_LOCK = 'keys-lock';
/** A removal's lock older than this, by the storage's clock, was left by a dead remover. */
export const KEYS_LOCK_STALE_MS = 60_000;
const KEY_ID = /^[0-9a-f]{16}$/;
const SALT_BYTES = 16;

/** RFC 9106's second recommendation (§4): 64 MiB, 3 passes, 4 lanes. */
export const DEFAULT_KDF: KdfParams = { memoryKib: 64 * 1024, passes: 3, lanes: 4 };
/** What a key file may ask of the machine that opens it: a hostile one must not take hours or all memory. */
export const KDF_LIMITS: KdfParams = { memoryKib: 1 << 20, passes: 64, lanes: 16 };

/** A key file as listed: its id, when it was made and its KDF's costs (never the key). */
export interface KeyInfo {
  id: string;
  created: number;
  kdf: KdfParams;
}

/** A key file, decoded. */
interface KeyFile extends KeyInfo {
  salt: Uint8Array;
  sealed: Uint8Array;
}

const utf8 = new TextEncoder();
const keyObject = (id: string) => `${KEYS_PREFIX}${id}`;

/** The associated data binding a key file's sealed key to its store and its name. */
const keyAd = (storeId: string, id: string) => utf8.encode(`kura/key\0${storeId}\0${id}`);

/** Argon2id costs a person asked for, checked against the limits every reader applies. */
export function checkKdf(kdf: KdfParams): KdfParams {
  for (const f of ['memoryKib', 'passes', 'lanes'] as const) {
    const v = kdf[f];
    if (!Number.isInteger(v) || v < 1 || v > KDF_LIMITS[f]) throw new InvalidInputError(`kdf ${f} must be an integer in [1, ${KDF_LIMITS[f]}], not ${v}`, `kdf.${f}`);
  }
  if (kdf.memoryKib < 8 * kdf.lanes) throw new InvalidInputError(`kdf memoryKib must be at least 8 KiB a lane (${8 * kdf.lanes})`, 'kdf.memoryKib');
  return kdf;
}

function encodeKeyFile(f: KeyFile): Uint8Array {
  return utf8.encode(
    `${JSON.stringify({ kdf: 'argon2id', version: 19, memory_kib: f.kdf.memoryKib, passes: f.kdf.passes, lanes: f.kdf.lanes, salt: toHex(f.salt), created: f.created, key: toHex(f.sealed) })}\n`,
  );
}

const unhex = (s: unknown): Uint8Array | undefined =>
  typeof s === 'string' && /^(?:[0-9a-f]{2})*$/.test(s) ? Uint8Array.from(s.match(/../g) ?? [], (h) => parseInt(h, 16)) : undefined;

/** A key file's bytes decoded and checked (CORRUPT_DATA `key-file` when they are not one). */
function decodeKeyFile(bytes: Uint8Array, id: string): KeyFile {
  const bad = (why: string) => new CorruptDataError(`key file ${id}: ${why}`, 'key-file');
  let j: Record<string, unknown>;
  try {
    j = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes)) as Record<string, unknown>;
  } catch {
    throw bad('not JSON');
  }
  if (typeof j !== 'object' || j === null || j.kdf !== 'argon2id' || j.version !== 19) throw bad('not an Argon2id (version 19) key file');
  const kdf = { memoryKib: j.memory_kib, passes: j.passes, lanes: j.lanes } as KdfParams;
  try {
    checkKdf(kdf);
  } catch {
    throw bad(`its costs are out of bounds (${JSON.stringify(kdf)})`);
  }
  const salt = unhex(j.salt);
  const sealed = unhex(j.key);
  if (!salt || salt.length < SALT_BYTES) throw bad('its salt is not 16 bytes or more of hex');
  if (!sealed || sealed.length !== KEY_BYTES + 40) throw bad('its sealed key is not 72 bytes of hex');
  if (typeof j.created !== 'number' || !Number.isFinite(j.created)) throw bad('no creation time');
  return { id, created: j.created, kdf, salt, sealed };
}

/** The master key sealed for `password` as a new key file. */
function wrap(storeId: string, master: Uint8Array, password: Uint8Array, kdf: KdfParams, now: number): KeyFile {
  const id = toHex(randomBytes(8));
  const salt = randomBytes(SALT_BYTES);
  const wrapping = argon2id(password, salt, kdf);
  return { id, created: now, kdf, salt, sealed: seal(wrapping, master, keyAd(storeId, id)) };
}

/** The master key in `f` when `password` opens it, else undefined. */
function unwrap(storeId: string, f: KeyFile, password: Uint8Array): Uint8Array | undefined {
  const wrapping = argon2id(password, f.salt, f.kdf);
  try {
    return unseal(wrapping, f.sealed, keyAd(storeId, f.id));
  } catch (e) {
    if (e instanceof CorruptDataError) return undefined;
    throw e;
  }
}

/** A master key and the key file that gave it. */
export interface Unlocked {
  master: Uint8Array;
  id: string;
}

/** The key files of the store `storeId` in `objects`. */
export class KeyRing {
  constructor(
    readonly objects: ObjectStore,
    readonly storeId: string,
  ) {}

  /** The key files, oldest first; `damaged` names the objects under keys/ that are not key files. */
  async list(): Promise<{ keys: KeyInfo[]; damaged: string[] }> {
    const keys: KeyInfo[] = [];
    const damaged: string[] = [];
    for (const { id, file } of await this.#files()) {
      if (file instanceof Error) damaged.push(id);
      else keys.push({ id, created: file.created, kdf: file.kdf });
    }
    return { keys: keys.sort((a, b) => a.created - b.created || a.id.localeCompare(b.id)), damaged };
  }

  /** The objects under keys/ that are not key files (damaged, or not a key file's name), each with why. */
  async damaged(): Promise<{ id: string; message: string }[]> {
    return (await this.#files()).flatMap(({ id, file }) => (file instanceof Error ? [{ id, message: file.message }] : []));
  }

  /** A new master key and its first key file (a store being made). */
  async create(password: Uint8Array, kdf: KdfParams = DEFAULT_KDF, now = Date.now()): Promise<Unlocked> {
    const master = randomBytes(KEY_BYTES);
    return { master, id: await this.add(master, password, kdf, now) };
  }

  /**
   * The master key, from the first key file `password` opens; WRONG_PASSWORD when none does
   * (CORRUPT_DATA instead when no object under keys/ is a key file at all: nothing could
   * have opened).
   */
  async unlock(password: Uint8Array | undefined, preferred?: string): Promise<Unlocked> {
    const listed = await this.#files();
    // `preferred` (the key that opened the store last, where the caller remembers it) first.
    const files = preferred ? [...listed.filter((f) => f.id === preferred), ...listed.filter((f) => f.id !== preferred)] : listed;
    const good = files.filter((f): f is { id: string; file: KeyFile } => !(f.file instanceof Error));
    if (good.length === 0) {
      const first = files.find((f) => f.file instanceof Error);
      if (first) throw first.file;
      throw new CorruptDataError(`the store ${this.storeId} is encrypted and has no key file`, 'key-file');
    }
    if (password === undefined) throw new WrongPasswordError('this store is encrypted: give its password (the `password` option; kura: a terminal prompt, --password-command, KURA_PASSWORD_FILE or KURA_PASSWORD)', 'missing');
    for (const { id, file } of good) {
      const master = unwrap(this.storeId, file, password);
      if (master) return { master, id };
    }
    // (A key file is bound to the store id kura-store.json names: a changed id fails them all
    // as a wrong password does — the two cannot be told apart before a key opens, so both are said.
    // A damaged key file is named: the password's own may be that one — a trial was told only
    // "wrong password" for the right one.)
    const bad = files.filter((f) => f.file instanceof Error).map((f) => `${KEYS_PREFIX}${f.id}`);
    const damaged = bad.length ? `; ${bad.length === 1 ? `${bad[0]} is damaged` : `${bad.length} key files are damaged (${bad.slice(0, 3).join(', ')}${bad.length > 3 ? ', …' : ''})`}: if the password is that key's, restore it from a copy of the store` : '';
    throw new WrongPasswordError(`no key file of this store opens with that password (${good.length} tried${damaged}; if the password is right, the store id in kura-store.json was changed: damage)`, 'wrong');
  }

  /** The ids of the key files `password` opens (each tried: an Argon2id derivation apiece). */
  async opens(password: Uint8Array): Promise<string[]> {
    const out: string[] = [];
    for (const { id, file } of await this.#files()) if (!(file instanceof Error) && unwrap(this.storeId, file, password)) out.push(id);
    return out;
  }

  /**
   * A key file for `password` holding `master`; answers its id. Refused (INVALID_INPUT) when
   * the password opens a key file already: one key file a password, so that changing or
   * removing a password's key file is the end of that password (two for one password left the
   * old one opening the store after `kura key passwd`).
   */
  async add(master: Uint8Array, password: Uint8Array, kdf: KdfParams = DEFAULT_KDF, now = Date.now(), replacing = false): Promise<string> {
    checkKdf(kdf);
    // (`replacing`: passwd giving the same password new costs — its old files go right after.)
    const taken = replacing ? [] : await this.opens(password);
    if (taken.length) throw new InvalidInputError(`that password opens key ${taken[0]} already: give another (one key file a password)`, 'password');
    for (;;) {
      const f = wrap(this.storeId, master, password, kdf, now);
      // 64 random bits: a taken name is a collision to draw again, never an overwrite.
      if (await this.objects.create(keyObject(f.id), encodeKeyFile(f))) return f.id;
    }
  }

  /**
   * Removes key file `id`, holding the lock (FORMAT.md §17.2): refused (INVALID_INPUT) when it
   * is the store's last key file; NOT_FOUND when there is no such file.
   */
  async remove(id: string, now = () => Date.now()): Promise<void> {
    if (!KEY_ID.test(id)) throw new InvalidInputError(`a key id is 16 lowercase hex digits, not ${JSON.stringify(id)}`, 'id');
    await this.#withLock(now, async () => {
      const files = await this.#files();
      const it = files.find((f) => f.id === id);
      if (!it) throw new NotFoundError(`no key file ${id}`);
      if (!files.some((f) => f.id !== id && !(f.file instanceof Error))) throw new InvalidInputError(`key ${id} is the store's last key: add another before removing it`, 'id');
      const bytes = await this.objects.get(keyObject(id));
      await this.objects.delete(keyObject(id));
      // A remover paused past the lock's age may have raced another: never leave none.
      if (!(await this.#files()).some((f) => !(f.file instanceof Error))) {
        await this.objects.create(keyObject(id), bytes);
        throw new InvalidInputError(`key ${id} was the store's last key when removed (another removal ran at the same time); it is back`, 'id');
      }
    });
  }

  /**
   * Changes a password: a key file for `password` holding `master`, then every key file `old`
   * opens removed (a store made before `add` refused a second key file for one password may
   * have several). Answers the new id and those removed.
   */
  async passwd(old: Uint8Array, master: Uint8Array, password: Uint8Array, kdf: KdfParams = DEFAULT_KDF): Promise<{ id: string; removed: string[] }> {
    // The same password again is a change of its Argon2id costs: its new file, then the old go.
    const same = old.length === password.length && old.every((b, i) => b === password[i]);
    const added = await this.add(master, password, kdf, Date.now(), same);
    const removed = (await this.opens(old)).filter((id) => id !== added);
    for (const id of removed) await this.remove(id);
    return { id: added, removed };
  }

  async #files(): Promise<{ id: string; file: KeyFile | CorruptDataError }[]> {
    const out: { id: string; file: KeyFile | CorruptDataError }[] = [];
    for await (const o of listAll(this.objects, KEYS_PREFIX)) {
      const id = o.key.slice(KEYS_PREFIX.length);
      let file: KeyFile | CorruptDataError;
      try {
        file = KEY_ID.test(id) ? decodeKeyFile(await this.objects.get(o.key), id) : new CorruptDataError(`${o.key} is not a key file's name`, 'key-file');
      } catch (e) {
        if (e instanceof NotFoundError) continue; // removed since the listing
        if (!(e instanceof CorruptDataError)) throw e;
        file = e;
      }
      out.push({ id, file });
    }
    return out;
  }

  /** Told once when a key change waits for the lock another holds (a crashed one's: KEYS_LOCK_STALE_MS). */
  onLockWait: (() => void) | undefined;

  async #withLock<T>(now: () => number, f: () => Promise<T>): Promise<T> {
    const holder = toHex(randomBytes(8));
    const mine = utf8.encode(`${JSON.stringify({ holder, time: now() })}\n`);
    for (let waited = 0; !(await this.objects.create(KEYS_LOCK, mine)); waited++) {
      if (waited === 0) this.onLockWait?.();
      const info = await this.objects.head(KEYS_LOCK);
      const skew = this.objects.clockOffsetMs?.() ?? 0;
      // A stale lock is taken over by compare-and-swap: of two removers that find it stale,
      // one wins (a delete, then a create, would let both hold it).
      if (info && now() + skew - info.modified > KEYS_LOCK_STALE_MS && (await this.objects.replace(KEYS_LOCK, mine, info.etag)) !== undefined) break;
      await new Promise((r) => setTimeout(r, Math.min(1000, 50 * 2 ** Math.min(waited, 5))));
    }
    try {
      return await f();
    } finally {
      await this.objects.delete(KEYS_LOCK);
    }
  }
}
