// A lab for one test file: its own name and state dir, torn down afterwards.
import { labDown, labUp, labConnect, type LabInfo } from '../../lab/index.ts';
import type { Session } from '../../transport/index.ts';
import { tempDir } from './tmp.ts';

export interface TestLab { name: string; stateDir: string; info: LabInfo; ssh(host: string): Promise<Session>; down(): Promise<void> }

export async function testLab(name: string, hosts: number): Promise<TestLab> {
  const stateDir = tempDir(`hardwire-${name}-`);
  await labDown({ name, stateDir }).catch(() => undefined);
  const info = await labUp({ name, stateDir, hosts });
  return {
    name, stateDir, info,
    ssh: (host) => labConnect(host, { name, stateDir }),
    down: async () => { await labDown({ name, stateDir }); },
  };
}

export async function remote(s: Session, argv: string[]): Promise<string> {
  return (await s.exec(argv, { allowFail: true })).stdout.trim();
}
