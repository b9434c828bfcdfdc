import { chmodSync, lstatSync, mkdirSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** What only the owner may do: folders 0700, files 0600 (an owner's execute bit kept). */
const OWNER_ONLY = 0o700;

/**
 * The embedded database's data directory as a folder only its owner can open, made if missing (its
 * parents as the umask says). Answers whether it was made by this call.
 */
export function makePrivateDir(dir: string): boolean {
  mkdirSync(dirname(dir), { recursive: true });
  try {
    mkdirSync(dir, { mode: OWNER_ONLY });
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    return false;
  }
}

/**
 * Takes every permission of the group and of others off `dir` and everything under it (a folder
 * 0755 becomes 0700, a file 0666 0600), the folder itself first so that nothing under it is
 * reachable while the rest is done. Symbolic links are not followed. Answers how many entries were
 * open to others while `dir` itself was: 0 when it was private (nothing under it was reachable, even
 * a file a crash left 0644).
 *
 * Why not a umask: PGlite's file system (Emscripten's NODEFS) sets the mode of each file it creates
 * with chmod, which a umask does not touch, and the files of a new database are unpacked from
 * PGlite's initial data directory as 0666 in 0755 folders (docs/operations.md#the-data-directory).
 */
export function makePrivate(dir: string): number {
  let opened = 0;
  const visit = (path: string) => {
    const stat = lstatSync(path, { throwIfNoEntry: false });
    if (!stat || stat.isSymbolicLink()) return; // gone meanwhile (a temporary file), or a link
    if ((stat.mode & 0o077) !== 0) {
      chmodSync(path, stat.mode & OWNER_ONLY);
      opened += 1;
    }
    if (stat.isDirectory()) for (const name of entries(path)) visit(join(path, name));
  };
  const top = lstatSync(dir);
  visit(dir);
  return (top.mode & 0o077) === 0 ? 0 : opened;
}

function entries(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
}
