// Two kinds of failure, two exit codes: bad input (2) never touches a host; operational failure (1).

/** Bad input: names the field and the fix. Exit code 2. */
export class InputError extends Error {
  readonly exitCode = 2;
  readonly field: string;
  /** Lines printed under the error, one per finding (preflight's failing checks). */
  readonly detail: string[];
  constructor(field: string, message: string, detail: string[] = []) {
    super(`${field}: ${message}`);
    this.name = 'InputError';
    this.field = field;
    this.detail = detail;
  }
}

/** A step failed on a host or in a tool. Exit code 1. Keeps host and step as data, not flattened text. */
export class StepError extends Error {
  readonly exitCode = 1;
  readonly host: string | undefined;
  readonly step: string;
  readonly detail: string[];
  constructor(
    step: string,
    message: string,
    opts: { host?: string; detail?: string[]; cause?: unknown } = {},
  ) {
    super(message, { cause: opts.cause });
    this.name = 'StepError';
    this.step = step;
    this.host = opts.host;
    this.detail = opts.detail ?? [];
  }
}

export function exitCodeOf(err: unknown): number {
  if (err instanceof InputError || err instanceof StepError) return err.exitCode;
  return 1;
}
