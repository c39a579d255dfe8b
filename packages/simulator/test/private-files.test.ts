import { spawn } from 'node:child_process';
import { existsSync, lstatSync } from 'node:fs';
import {
  chmod,
  chown,
  link,
  lstat,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  rm,
  stat,
  symlink,
  writeFile,
} from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { loadDevSecrets } from '../src/cli/dev-secrets.js';
import { UnsafeFileError } from '../src/cli/private-files.js';
import { runCli } from '../src/cli/run-cli.js';
import { controlTokenFor, runningSimulatorPid, writeSimulatorState } from '../src/cli/simulator-state.js';

// The CLI's state file (the control token) and dev keys live in ./.service-pay of whatever folder it runs
// in, a cloned repository included: whatever that folder carries (a link, a FIFO, loose modes) must end
// in a refusal or a safe write, never a write outside the folder.

const cleanup: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const f of cleanup.reverse()) await f();
});

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'service-pay-files-'));
  cleanup.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

const mkfifo = (path: string) =>
  new Promise<void>((resolve, reject) =>
    spawn('mkfifo', [path]).on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`mkfifo ${code}`)))),
  );
const mode = async (path: string) => (await lstat(path)).mode & 0o777;
const SIM = { url: 'http://127.0.0.1:4010', controlToken: 'sim_control_token_secret' };
const VALID = { apiKey: 'pk_planted', apiSecret: 'sk_planted', webhookSecret: 'whsec_planted', createdAt: '' };

async function refusal(pending: Promise<unknown>): Promise<UnsafeFileError> {
  const error = await pending.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(UnsafeFileError);
  expect((error as UnsafeFileError).code).toBe('UNSAFE_FILE');
  return error as UnsafeFileError;
}

describe('the state file (URL and control token)', () => {
  it('a symlink planted at simulator.json is replaced, its target never written; stop removes only our file', async () => {
    const dir = await tempDir();
    const outside = join(dir, 'outside.txt');
    await writeFile(outside, 'precious\n');
    await mkdir(join(dir, '.service-pay'), { mode: 0o700 });
    const state = join(dir, '.service-pay', 'simulator.json');
    await symlink(outside, state);
    const remove = await writeSimulatorState(SIM, state);
    expect(await readFile(outside, 'utf8')).toBe('precious\n');
    expect(lstatSync(state).isFile()).toBe(true);
    expect(JSON.parse(await readFile(state, 'utf8')).controlToken).toBe(SIM.controlToken);
    expect(await mode(state)).toBe(0o600);
    await remove();
    expect(existsSync(state)).toBe(false);
    expect(await readFile(outside, 'utf8')).toBe('precious\n');
    expect(await readdir(join(dir, '.service-pay'))).toEqual([]); // no temporary file left behind
  });

  it('a dangling symlink at simulator.json: its target is never created', async () => {
    const dir = await tempDir();
    await mkdir(join(dir, '.service-pay'));
    const state = join(dir, '.service-pay', 'simulator.json');
    await symlink(join(dir, 'created-through-the-link'), state);
    await writeSimulatorState(SIM, state);
    expect(existsSync(join(dir, 'created-through-the-link'))).toBe(false);
    expect(lstatSync(state).isFile()).toBe(true);
  });

  it('a .service-pay folder that is itself a symlink is refused: nothing written where it points', async () => {
    const dir = await tempDir();
    const elsewhere = join(dir, 'elsewhere');
    await mkdir(elsewhere);
    await symlink(elsewhere, join(dir, '.service-pay'));
    const error = await refusal(writeSimulatorState(SIM, join(dir, '.service-pay', 'simulator.json')));
    expect(error.message).toMatch(/\.service-pay is a symbolic link; .*real folder/);
    expect(await readdir(elsewhere)).toEqual([]);
  });

  it('an existing simulator.json of mode 0644 in a folder of 0755 ends as 0600 in 0700', async () => {
    const dir = await tempDir();
    const folder = join(dir, '.service-pay');
    await mkdir(folder);
    await chmod(folder, 0o755);
    const state = join(folder, 'simulator.json');
    await writeFile(state, '{}\n');
    await chmod(state, 0o644);
    await writeSimulatorState(SIM, state);
    expect([await mode(folder), await mode(state)]).toEqual([0o700, 0o600]);
  });

  it('a state file replaced since (another simulator, or a link) is left alone at stop', async () => {
    const dir = await tempDir();
    const state = join(dir, '.service-pay', 'simulator.json');
    const removeFirst = await writeSimulatorState(SIM, state);
    const removeSecond = await writeSimulatorState({ ...SIM, url: 'http://127.0.0.1:4011' }, state);
    await removeFirst();
    expect(JSON.parse(await readFile(state, 'utf8')).url).toBe('http://127.0.0.1:4011');
    await removeSecond();
    expect(existsSync(state)).toBe(false);
    const outside = join(dir, 'outside.txt');
    await writeFile(outside, 'precious\n');
    const removeThird = await writeSimulatorState(SIM, state);
    await rm(state);
    await symlink(outside, state);
    await removeThird();
    expect(lstatSync(state).isSymbolicLink()).toBe(true);
    expect(await readFile(outside, 'utf8')).toBe('precious\n');
  });

  it('a hard link planted at simulator.json: the other name keeps its content', async () => {
    const dir = await tempDir();
    const outside = join(dir, 'outside.txt');
    await writeFile(outside, 'precious\n');
    await mkdir(join(dir, '.service-pay'));
    const state = join(dir, '.service-pay', 'simulator.json');
    await link(outside, state);
    const remove = await writeSimulatorState(SIM, state);
    expect(await readFile(outside, 'utf8')).toBe('precious\n');
    expect((await stat(state)).nlink).toBe(1);
    await remove();
    expect(await readFile(outside, 'utf8')).toBe('precious\n');
  });

  it('trigger reads the token only from a regular file of its own: a FIFO does not hang it, a link is not followed', async () => {
    const dir = await tempDir();
    await mkdir(join(dir, '.service-pay'));
    const state = join(dir, '.service-pay', 'simulator.json');
    const env = {};
    await mkfifo(state);
    expect(controlTokenFor(SIM.url, env, state)).toBeUndefined();
    expect(runningSimulatorPid(SIM.url, state)).toBeUndefined();
    await rm(state);
    const elsewhere = join(dir, 'elsewhere.json');
    await writeFile(elsewhere, JSON.stringify({ ...SIM, pid: 42 }));
    await symlink(elsewhere, state);
    expect(controlTokenFor(SIM.url, env, state)).toBeUndefined();
    expect(runningSimulatorPid(SIM.url, state)).toBeUndefined();
    await rm(state);
    await writeSimulatorState(SIM, state);
    expect(controlTokenFor(SIM.url, env, state)).toBe(SIM.controlToken);
    expect(runningSimulatorPid(SIM.url, state)).toBe(process.pid);
  });

  it('a folder in the way of simulator.json is refused, not written into', async () => {
    const dir = await tempDir();
    const state = join(dir, '.service-pay', 'simulator.json');
    await mkdir(state, { recursive: true });
    await expect(writeSimulatorState(SIM, state)).rejects.toThrow();
    expect(await readdir(state)).toEqual([]);
    expect((await readdir(join(dir, '.service-pay'))).sort()).toEqual(['simulator.json']);
  });
});

describe('dev-secrets.json', () => {
  const secretsIn = async (dir: string) => {
    await mkdir(join(dir, '.service-pay'), { mode: 0o700, recursive: true });
    return join(dir, '.service-pay', 'dev-secrets.json');
  };

  it('a symlink to a valid keys file is refused (UNSAFE_FILE), not read', async () => {
    const dir = await tempDir();
    const planted = join(dir, 'planted.json');
    await writeFile(planted, JSON.stringify(VALID), { mode: 0o600 });
    const file = await secretsIn(dir);
    await symlink(planted, file);
    const error = await refusal(loadDevSecrets(file));
    expect(error.message).toBe(`${file} is a symbolic link; use the file itself, not a link to it`);
  });

  it('a dangling symlink is the same clear refusal, not UNEXPECTED, and creates nothing', async () => {
    const dir = await tempDir();
    const file = await secretsIn(dir);
    await symlink(join(dir, 'nowhere.json'), file);
    await refusal(loadDevSecrets(file));
    expect(existsSync(join(dir, 'nowhere.json'))).toBe(false);
  });

  it('through the CLI: exit code 2 and the code UNSAFE_FILE, in text and in --json', async () => {
    const dir = await tempDir();
    const file = await secretsIn(dir);
    await symlink(join(dir, 'nowhere.json'), file);
    const lines: string[] = [];
    const io = { out: (l: string) => lines.push(l), err: (l: string) => lines.push(l) };
    const args = ['listen', '--forward-to', 'http://127.0.0.1:9/hook', '--secrets-file', file];
    expect(await runCli(args, io)).toBe(2);
    expect(lines).toEqual([
      `service-pay: ${file} is a symbolic link; use the file itself, not a link to it (UNSAFE_FILE)`,
    ]);
    lines.length = 0;
    expect(await runCli([...args, '--json'], io)).toBe(2);
    expect(JSON.parse(lines[0] as string)).toMatchObject({ error: 'UNSAFE_FILE', exitCode: 2 });
  });

  it('a FIFO is refused at once (no wait for a writer)', async () => {
    const dir = await tempDir();
    const file = await secretsIn(dir);
    await mkfifo(file);
    expect((await refusal(loadDevSecrets(file))).message).toBe(`${file} is not a regular file`);
  });

  it('a folder at its name is refused', async () => {
    const dir = await tempDir();
    const file = await secretsIn(dir);
    await mkdir(file);
    expect((await refusal(loadDevSecrets(file))).message).toBe(`${file} is not a regular file`);
  });

  it('a hard link (a second name another path reads or changes) is refused', async () => {
    const dir = await tempDir();
    const other = join(dir, 'other-name.json');
    await writeFile(other, JSON.stringify(VALID), { mode: 0o600 });
    const file = await secretsIn(dir);
    await link(other, file);
    expect((await refusal(loadDevSecrets(file))).message).toMatch(/has 2 names \(hard links\)/);
  });

  it('a file readable by others is warned about and brought to 0600; a loose .service-pay folder to 0700', async () => {
    const dir = await tempDir();
    const file = await secretsIn(dir);
    await chmod(join(dir, '.service-pay'), 0o755);
    await writeFile(file, JSON.stringify(VALID));
    await chmod(file, 0o644);
    const warnings: string[] = [];
    const { secrets } = await loadDevSecrets(file, (m) => warnings.push(m));
    expect(secrets.webhookSecret).toBe('whsec_planted');
    expect(warnings).toEqual([
      `warning: ${file} was open to other users (mode 644); now 0600. Delete it for new keys if others may have read it.`,
    ]);
    expect([await mode(join(dir, '.service-pay')), await mode(file)]).toEqual([0o700, 0o600]);
  });

  it('a .service-pay folder that is a symlink is refused, for reading and for creating', async () => {
    const dir = await tempDir();
    const elsewhere = join(dir, 'elsewhere');
    await mkdir(elsewhere);
    await symlink(elsewhere, join(dir, '.service-pay'));
    await refusal(loadDevSecrets(join(dir, '.service-pay', 'dev-secrets.json')));
    expect(await readdir(elsewhere)).toEqual([]);
  });

  it('a custom --secrets-file in a folder others can write is refused; that folder is not changed', async () => {
    const dir = await tempDir();
    const shared = join(dir, 'shared');
    await mkdir(shared);
    await chmod(shared, 0o777);
    const error = await refusal(loadDevSecrets(join(shared, 'keys.json')));
    expect(error.message).toMatch(/is writable by other users \(mode 777\)/);
    expect(await mode(shared)).toBe(0o777);
  });

  it.skipIf(process.getuid?.() !== 0)('a file owned by another user is refused', async () => {
    const dir = await tempDir();
    const file = await secretsIn(dir);
    await writeFile(file, JSON.stringify(VALID), { mode: 0o600 });
    await chown(file, 12345, 12345);
    expect((await refusal(loadDevSecrets(file))).message).toMatch(/belongs to another user \(uid 12345\)/);
  });

  it('created with 0600 in 0700 through a temporary file; commands starting at once share one set of keys', async () => {
    const dir = await tempDir();
    const file = join(dir, '.service-pay', 'dev-secrets.json');
    const loads = await Promise.all(Array.from({ length: 6 }, () => loadDevSecrets(file)));
    expect(new Set(loads.map((l) => l.secrets.webhookSecret)).size).toBe(1);
    expect(loads.filter((l) => l.created)).toHaveLength(1);
    expect([await mode(join(dir, '.service-pay')), await mode(file)]).toEqual([0o700, 0o600]);
    expect((await stat(file)).nlink).toBe(1);
    expect(await readdir(join(dir, '.service-pay'))).toEqual(['dev-secrets.json']);
  });
});

describe('service-pay listen in a folder carrying a planted link', () => {
  const bin = fileURLToPath(new URL('../bin/service-pay.js', import.meta.url));

  it('writes its state file in the folder, not through the link, and removes only that at stop', async () => {
    const dir = await tempDir();
    const outside = join(dir, 'outside.txt');
    await writeFile(outside, 'precious\n');
    await mkdir(join(dir, '.service-pay'));
    const state = join(dir, '.service-pay', 'simulator.json');
    await symlink(outside, state);
    const child = spawn(
      process.execPath,
      [bin, 'listen', '--port', '0', '--json', '--forward-to', 'http://127.0.0.1:9/hook'],
      { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    cleanup.push(async () => child.kill('SIGKILL'));
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => (stderr += c));
    const exit = new Promise<number | null>((done) => child.on('close', done));
    await expect.poll(() => existsSync(state) && lstatSync(state).isFile(), { timeout: 15_000 }).toBe(true);
    expect(await readFile(outside, 'utf8')).toBe('precious\n');
    expect(await mode(state)).toBe(0o600);
    child.kill('SIGINT');
    expect(await exit).toBe(0);
    expect(existsSync(state)).toBe(false);
    expect(await readFile(outside, 'utf8')).toBe('precious\n');
    expect(stderr).not.toMatch(/could not write/);
  });
});
