// What audit tests read on a host themselves, to check `hardwire audit` against: the state the
// audit must leave unchanged, and a process's flags from its /proc/<pid>/cmdline.
import type { Session } from '../../core/transport/index.ts';
import { remote } from './lab.ts';

/**
 * Every file's hash under /etc, /var/lib/kubelet and /usr/local/bin, and /var/lib/etcd's names,
 * modes and owners. But for what the kubelet itself rewrites whenever a Pod comes or goes (each
 * Pod's directory, and its allocated/actuated Pod checkpoints): a test run beside the audit (the
 * CIS suite's probe Pod) changed them during one, and no SSH session writes there.
 */
const STATE = [
  "find /etc /var/lib/kubelet /usr/local/bin -xdev -type f -not -path '/var/lib/kubelet/pods/*' -not -name '*_pods_state' -print0 2>/dev/null | sort -z | xargs -0 sha256sum",
  'find /var/lib/etcd -printf "%p %m %u %g %y\\n" 2>/dev/null | sort',
].join('; ');

export function hostState(s: Session): Promise<string> {
  return remote(s, ['sh', '-c', STATE]);
}

/** argv[0] and each flag as `--name=value` (`--name value` joined; a lone `--name` as `=true`; a secret's value redacted), read here. */
export async function cmdlineFlags(
  s: Session,
  pid: number,
): Promise<{ argv0: string; flags: string[] }> {
  const words = (await remote(s, ['sh', '-c', `tr '\\0' '\\n' < /proc/${pid}/cmdline`])).split(
    '\n',
  );
  const flags = words.flatMap((x, i) =>
    !x.startsWith('-')
      ? []
      : x.includes('=')
        ? [x]
        : [`${x}=${words[i + 1] && !words[i + 1]!.startsWith('-') ? words[i + 1] : 'true'}`],
  );
  return { argv0: words[0]!, flags: flags.map(redacted) };
}

/** The report repeats no value of a flag named for a token, password or secret (but a file's path). */
function redacted(flag: string): string {
  const [name, ...value] = flag.split('=');
  return /(token|password|secret)/.test(name!) && !name!.endsWith('-file')
    ? `${name}=(redacted)`
    : [name, ...value].join('=');
}
