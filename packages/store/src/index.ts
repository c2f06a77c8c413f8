/** @kura/store, platform-neutral part: the store logic and its backend contracts. */
export { Store as StoreCore, FORMAT_NAME, FORMAT_VERSION } from './store.js';
export type { StoreBackends, StoreStats, StoreConfig, ListResult, PutInput, VersionInfo, DocumentHead, DocumentReader } from './store.js';
export { InvalidQueryError, type SearchHit, type SearchQuery } from './catalog/search.js';
export type { PutResult, ChunkStream, ChunkEvent, PutOptions } from './put.js';
export { TREE_FORMAT, encodeTree, decodeTree, badName } from './catalog/snapshot.js';
export type { DirNode, FileEntry, DirEntry, SymlinkEntry, TreeEntry, SnapshotInfo, SnapshotDiff, WalkEntry } from './catalog/snapshot.js';
export { MAX_SYNC_KEYS, DEFAULT_HOLD_MS, type ChunkPutResult } from './bytes/sync.js';
export type { DocumentInfo, EntryInfo, EntryTarget } from './catalog/entries.js';
export type { GcProgress, GcReport } from './bytes/gc.js';
export type { VerifyReport, DamagedChunk, DamagedDocument, DamagedTree, DamagedPack, VerifyProgress } from './bytes/verify.js';
export type { InitOptions, OpenOptions, PutMeta, MetaUpdate, ListQuery, Durability } from './options.js';
export type { SqlDatabase, SqlStatement, SqlValue, RunResult } from './backend/sql.js';
export { PackMissingError, type PackStore, type PackWriter, type PackInfo } from './backend/packs.js';
export { MemoryPackStore } from './backend/memory-packs.js';
export { MemoryLogStore, type LogStore, type SegmentAppender } from './catalog/log-store.js';
export { WasmDatabase, openMemoryDatabase } from './backend/sqlite-wasm.js';
export * from './errors.js';
export { detectMediaType, guessMediaType, sniffMediaType, SNIFF_HEAD } from './media-types.js';
