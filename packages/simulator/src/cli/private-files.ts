import { randomBytes } from 'node:crypto';
import { closeSync, constants, fstatSync, openSync, readFileSync, type Stats } from 'node:fs';
import { chmod, type FileHandle, link, lstat, mkdir, open, rename, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { UsageError } from './usage-error.js';

/**
 * A state or secrets file the CLI will not use: a symbolic link, not a regular file, owned by another
 * user, with a second name (hard link), in a folder it cannot trust. Exit code 2, code `UNSAFE_FILE`.
 *
 * @example
 * ```ts
 * throw new UnsafeFileError('.service-pay/dev-secrets.json is a symbolic link; ...');
 * ```
 */
export class UnsafeFileError extends Error {
  override readonly name = 'UnsafeFileError';
  readonly code = 'UNSAFE_FILE';
}

/** Where a written file is, to remove it at stop only if it is still the one written. */
export interface WrittenFile {
  path: string;
  dev: number;
  ino: number;
}

// The CLI's own folder is brought to 0700 when it is looser; a folder the user named for a custom
// --secrets-file (their project folder, say) is only checked, never changed.
const OWN_FOLDER = '.service-pay';
const MAX_PRIVATE_FILE_BYTES = 64 * 1024;
// Windows reports no POSIX owner or mode bits worth checking (its ACLs decide).
const POSIX = process.platform !== 'win32';
// The sticky bit: in such a folder (/tmp) no one else may rename or remove this user's entries.
const STICKY = 0o1000;

/**
 * Checks the folder of a state or secrets file by its own entry (lstat): a real folder, not a symbolic
 * link (a cloned repository can carry one pointing anywhere), owned by this user, writable by no one else.
 * With `create`, a missing folder is made with mode 0700; `undefined` when it is missing otherwise.
 *
 * @example
 * ```ts
 * await checkFolder('.service-pay', true);
 * ```
 */
export async function checkFolder(dir: string, create: boolean): Promise<Stats | undefined> {
  let st = await lstatOrUndefined(dir);
  if (st === undefined) {
    if (!create) return undefined;
    await mkdir(dir, { recursive: true, mode: 0o700 });
    st = await lstat(dir);
  }
  if (st.isSymbolicLink()) {
    throw new UnsafeFileError(
      `${dir} is a symbolic link; the simulator keeps its token and dev keys only in a real folder (remove the link and run again)`,
    );
  }
  if (!st.isDirectory()) throw new UnsafeFileError(`${dir} is not a folder`);
  refuseOtherOwner(dir, st);
  if (POSIX && (st.mode & 0o077) !== 0) {
    if (basename(dir) === OWN_FOLDER) await chmod(dir, 0o700);
    else if ((st.mode & 0o022) !== 0 && (st.mode & STICKY) === 0) {
      throw new UnsafeFileError(
        `${dir} is writable by other users (mode ${octal(st.mode)}), who could replace the file; choose another folder or chmod go-w it`,
      );
    }
  }
  return st;
}

/**
 * Writes `text` to `path` with mode 0600 through a new file in the checked folder and a rename: never
 * through a symbolic link or an existing file at `path` (a link there is replaced, its target untouched).
 * With `replace: false` an existing `path` is kept and `EEXIST` thrown (two commands starting at once).
 *
 * @example
 * ```ts
 * const written = await writePrivateFile('.service-pay/simulator.json', '{}\n');
 * await removeWrittenFile(written);
 * ```
 */
export async function writePrivateFile(path: string, text: string, replace = true): Promise<WrittenFile> {
  const dir = dirname(path);
  await checkFolder(dir, true);
  const temp = join(dir, `.${basename(path)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
  // O_EXCL: the temporary name is created here and now, never an entry someone planted (not even a link).
  const handle = await open(
    temp,
    constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
    0o600,
  );
  let written: WrittenFile;
  try {
    await handle.writeFile(text, 'utf8');
    await handle.chmod(0o600); // whatever the umask left
    const st = await handle.stat();
    written = { path, dev: st.dev, ino: st.ino };
    await handle.close();
    // rename replaces an entry (a link included) without following it; link refuses an existing one.
    if (replace) await rename(temp, path);
    else await link(temp, path);
  } catch (error) {
    await handle.close().catch(() => undefined);
    await unlink(temp).catch(() => undefined);
    throw error;
  }
  if (!replace) await unlink(temp);
  return written;
}

/**
 * Removes a file `writePrivateFile` wrote, if its name still holds that file: never anything else (a
 * link planted since, another simulator's newer state file).
 *
 * @example
 * ```ts
 * await removeWrittenFile(written);
 * ```
 */
export async function removeWrittenFile(file: WrittenFile): Promise<void> {
  const st = await lstatOrUndefined(file.path);
  if (st?.isFile() === true && st.dev === file.dev && st.ino === file.ino)
    await unlink(file.path).catch(() => undefined);
}

/**
 * Reads a private file by its own entry: `undefined` when it does not exist; refused when it is a
 * symbolic link (dangling or not), not a regular file (a FIFO would hang the read), owned by another
 * user, has a second name (a hard link that another path reads or changes), or is too large. A file
 * others may read or write is brought to 0600 and `warn` is told: its content may have been seen.
 *
 * @example
 * ```ts
 * const text = await readPrivateFile('.service-pay/dev-secrets.json', console.warn);
 * ```
 */
export async function readPrivateFile(path: string, warn: (message: string) => void): Promise<string | undefined> {
  if ((await checkFolder(dirname(path), false)) === undefined) return undefined;
  let handle: FileHandle;
  try {
    // O_NONBLOCK: opening a FIFO returns at once (then refused) instead of waiting for a writer.
    handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return undefined;
    if (code === 'ELOOP' || code === 'EMLINK')
      throw new UnsafeFileError(`${path} is a symbolic link; use the file itself, not a link to it`);
    throw new UsageError(`cannot read ${path}: ${(error as Error).message}`);
  }
  try {
    const st = await handle.stat();
    if (!st.isFile()) throw new UnsafeFileError(`${path} is not a regular file`);
    refuseOtherOwner(path, st);
    if (st.nlink > 1) {
      throw new UnsafeFileError(
        `${path} has ${st.nlink} names (hard links), so another path can read or change it; keep one copy`,
      );
    }
    if (st.size > MAX_PRIVATE_FILE_BYTES)
      throw new UnsafeFileError(`${path} is larger than ${MAX_PRIVATE_FILE_BYTES} bytes`);
    if (POSIX && (st.mode & 0o077) !== 0) {
      await handle.chmod(0o600);
      warn(
        `warning: ${path} was open to other users (mode ${octal(st.mode)}); now 0600. Delete it for new keys if others may have read it.`,
      );
    }
    return await handle.readFile('utf8');
  } finally {
    await handle.close();
  }
}

/**
 * The text of a file read only for a hint (the state file `trigger` reads): `undefined`, never a wait or a
 * throw, unless it is a regular file of this user, reached without following a link, of at most 64 KiB. A
 * FIFO planted there would block the read for ever, a link to /dev/zero would fill the memory.
 *
 * @example
 * ```ts
 * const text = readHintFile('.service-pay/simulator.json');
 * ```
 */
export function readHintFile(path: string): string | undefined {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    return undefined;
  }
  try {
    const st = fstatSync(fd);
    const uid = process.getuid?.();
    if (!st.isFile() || st.size > MAX_PRIVATE_FILE_BYTES || (uid !== undefined && st.uid !== uid)) return undefined;
    return readFileSync(fd, 'utf8');
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

function refuseOtherOwner(path: string, st: Stats): void {
  const uid = process.getuid?.();
  if (uid !== undefined && st.uid !== uid) {
    throw new UnsafeFileError(
      `${path} belongs to another user (uid ${st.uid}), not to you (uid ${uid}), who could change or replace it; use a file and folder of your own`,
    );
  }
}

async function lstatOrUndefined(path: string): Promise<Stats | undefined> {
  try {
    return await lstat(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

const octal = (mode: number) => (mode & 0o777).toString(8).padStart(3, '0');
