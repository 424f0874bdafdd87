// Renders a UnitModel to a systemd unit through templates/unit.service.hbs.
import Handlebars from 'handlebars';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '../../lib/paths.ts';
import { InputError } from '../../lib/errors.ts';
import type { UnitModel } from '../components/models/index.ts';
import type { ConfigCiter } from '../components/models/config-file.ts';

/** A flag's citation for the unit's comment; `config` cites a config file's fields (models' configYaml). */
export type Citer = ((component: string, flag: string) => string | undefined) & {
  config?: ConfigCiter;
};

let template: Handlebars.TemplateDelegate | undefined;

function compiled(): Handlebars.TemplateDelegate {
  // noEscape: this is a unit file, not HTML; arguments are escaped for systemd below instead.
  template ??= Handlebars.compile(
    readFileSync(join(repoRoot, 'core', 'render', 'unit.service.hbs'), 'utf8'),
    { noEscape: true, strict: true },
  );
  return template;
}

/** One ExecStart word, escaped for systemd: `%` specifiers and `$` expansion, quotes when needed. */
export function systemdWord(word: string): string {
  if (/[\n\r\\]/.test(word))
    throw new InputError(
      'flag value',
      `${JSON.stringify(word)} contains a newline or backslash, which a unit file cannot carry safely`,
    );
  const escaped = word.replaceAll('%', '%%').replaceAll('$', '$$$$');
  return /[\s"']/.test(escaped) ? `"${escaped.replaceAll('"', '\\"')}"` : escaped;
}

/** User=/Group= from the model's account, then its own directives; `%` escaped as in ExecStart. */
function directivesOf(model: UnitModel): { key: string; value: string; why: string }[] {
  const account = model.account
    ? [
        { key: 'User', value: model.account.user, why: model.account.why },
        {
          key: 'Group',
          value: model.account.user,
          why: `its own group; wire creates both (apply/phases/accounts.ts)`,
        },
      ]
    : [];
  return [...account, ...(model.directives ?? [])].map((d) => {
    if (/[\n\r]/.test(d.value))
      throw new InputError(
        d.key,
        `${JSON.stringify(d.value)} contains a newline, which a unit file cannot carry`,
      );
    return { ...d, value: d.value.replaceAll('%', '%%') };
  });
}

export function renderUnit(
  model: UnitModel,
  ctx: { cluster: string; host: string; after: string[]; cite?: Citer | undefined },
): string {
  return compiled()({
    cluster: ctx.cluster,
    host: ctx.host,
    component: model.component,
    description: model.description,
    documentation: model.documentation,
    after: ctx.after,
    type: model.type,
    directives: directivesOf(model),
    binary: model.binary,
    // The last word continues the line only when flags follow it (the registry takes no flags).
    args: (model.args ?? []).map((a, i, all) => ({
      word: systemdWord(a.word),
      why: a.why,
      cont: i < all.length - 1 || model.flags.length > 0 ? ' \\' : '',
    })),
    // A model's own Restart= directive replaces the default Restart=on-failure.
    restartDirective: (model.directives ?? []).some((d) => d.key === 'Restart'),
    flags: model.flags.map((f, i) => ({
      name: f.name,
      why: f.why,
      citation: ctx.cite?.(model.component, f.name) ?? (f.readAt ? `read at ${f.readAt}` : ''),
      value: systemdWord(f.value),
      cont: i < model.flags.length - 1 ? ' \\' : '',
    })),
  });
}
