// core/transport/systemctl.ts: the one parse of `systemctl show`, on output as systemd prints it.
import { describe, expect, it } from 'vitest';
import { parseShow, showArgv } from '../core/transport/systemctl.ts';

describe('systemctl show', () => {
  it('one record per unit, in order; a value keeps its own "=" and spaces', () => {
    const out = [
      'Id=etcd.service',
      'ActiveState=active',
      'ActiveEnterTimestampMonotonic=81234567',
      'ExecMainStartTimestamp=Wed 2026-12-02 01:00:00 UTC',
      '',
      'Id=kube-apiserver.service',
      'ActiveState=inactive',
      'Environment=A=1 B=2',
      '',
    ].join('\n');
    expect(parseShow(out)).toEqual([
      {
        Id: 'etcd.service',
        ActiveState: 'active',
        ActiveEnterTimestampMonotonic: '81234567',
        ExecMainStartTimestamp: 'Wed 2026-12-02 01:00:00 UTC',
      },
      { Id: 'kube-apiserver.service', ActiveState: 'inactive', Environment: 'A=1 B=2' },
    ]);
  });

  it('an empty value is kept; nothing printed is one empty record', () => {
    expect(parseShow('MainPID=0\nUser=\n')).toEqual([{ MainPID: '0', User: '' }]);
    expect(parseShow('')).toEqual([{}]);
  });

  it('asks with "show" first, which the read-only session allows', () => {
    expect(showArgv(['a.service', 'b.service'], ['MainPID', 'NRestarts'])).toEqual([
      'systemctl',
      'show',
      '--property=MainPID,NRestarts',
      'a.service',
      'b.service',
    ]);
  });
});
