// One Switchboard per data dir: a pid file created exclusively. A file whose process is
// gone is stale (a crash or kill -9) and is taken over; a live one is refused, naming it.

import { open, readFile, unlink } from 'node:fs/promises';
import { join } from 'node:path';

export interface DataDirLock {
  release(): Promise<void>;
}

export class DataDirBusyError extends Error {
  override name = 'DataDirBusyError';
}

export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export async function acquireDataDirLock(dataDir: string): Promise<DataDirLock> {
  const path = join(dataDir, 'switchboard.pid');
  for (let tries = 0; tries < 3; tries++) {
    try {
      const handle = await open(path, 'wx', 0o644);
      await handle.writeFile(`${process.pid}\n`);
      await handle.close();
      let released = false;
      return {
        async release() {
          if (released) return;
          released = true;
          await unlink(path).catch(() => undefined);
        },
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const holder = Number((await readFile(path, 'utf8').catch(() => '')).trim());
      if (Number.isInteger(holder) && holder > 0 && holder !== process.pid && processAlive(holder)) {
        throw new DataDirBusyError(
          `data dir ${dataDir} is in use by another Switchboard (pid ${holder}); stop it, or set SWITCHBOARD_DATA_DIR to another directory`,
        );
      }
      await unlink(path).catch(() => undefined);
    }
  }
  throw new DataDirBusyError(`could not take the lock on data dir ${dataDir}; another Switchboard is starting there`);
}
