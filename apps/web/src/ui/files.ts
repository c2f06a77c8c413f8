/**
 * Files from a drop or a picker, with the path each gets in the store: the name relative to
 * the folder it was picked or dropped in (folders keep their structure).
 */
import type { FileToAdd } from '../worker/store.worker.js';

export function fromInput(list: FileList): FileToAdd[] {
  return Array.from(list, (file) => ({ file, path: file.webkitRelativePath || file.name }));
}

/** Reads dropped items, walking dropped folders (readEntries returns them in batches). */
export async function fromDrop(dt: DataTransfer): Promise<FileToAdd[]> {
  const entries = Array.from(dt.items)
    .map((i) => i.webkitGetAsEntry?.())
    .filter((e): e is FileSystemEntry => !!e);
  if (!entries.length) return fromInput(dt.files);
  const out: FileToAdd[] = [];
  const walk = async (entry: FileSystemEntry, prefix: string): Promise<void> => {
    const path = prefix ? `${prefix}/${entry.name}` : entry.name;
    if (entry.isFile) {
      const file = await new Promise<File>((res, rej) => (entry as FileSystemFileEntry).file(res, rej));
      out.push({ file, path });
    } else if (entry.isDirectory) {
      const reader = (entry as FileSystemDirectoryEntry).createReader();
      for (;;) {
        const batch = await new Promise<FileSystemEntry[]>((res, rej) => reader.readEntries(res, rej));
        if (!batch.length) break;
        for (const child of batch) await walk(child, path);
      }
    }
  };
  for (const e of entries) await walk(e, '');
  return out;
}
