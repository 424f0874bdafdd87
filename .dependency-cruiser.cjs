// `pnpm loops` (in `pnpm test`): the folder rules of docs/architecture.md, and no import loop, type-only
// imports included (a loop of types still ties the modules' meaning together, and was how validating
// an inventory loaded gate code). scripts/import-types.ts runs first, so that every type dependency
// is an `import type` this graph sees.
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'An import loop, type-only imports included. Break it by moving what both sides need below them.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'core-only-core-and-lib',
      severity: 'error',
      comment: 'The pipeline (core/) imports only core and lib: the harness, the CLI, scripts and tests stand around it.',
      from: { path: '^core/' },
      to: { path: '^(harness|cli|scripts|test)/' },
    },
    {
      name: 'lib-imports-nothing-of-the-project',
      severity: 'error',
      comment: 'lib/ is plumbing under everything: it imports only node and packages.',
      from: { path: '^lib/' },
      to: { path: '^(core|harness|cli|scripts|test)/' },
    },
    {
      name: 'nothing-imports-cli',
      severity: 'error',
      comment: 'cli/ is the outermost shell; only the tests that walk its command tree import it.',
      from: { pathNot: '^(cli|test)/' },
      to: { path: '^cli/' },
    },
    {
      name: 'harness-feature-internals',
      severity: 'error',
      comment:
        "A harness feature reaches another only through that feature's index.ts. Shared pieces (harness/planes, harness/delve) have folders of their own and are not features.",
      from: { path: '^harness/([^/]+)/' },
      to: {
        path: '^harness/(cis|compare|drills|flags|lab|prove|trace)/',
        pathNot: ['^harness/$1/', '^harness/[^/]+/index\\.ts$'],
      },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    includeOnly: { path: '\\.ts$' },
    exclude: { path: '(^|/)(node_modules|\\.hardwire)/' },
    // TypeScript 7 has no JavaScript API yet, which dependency-cruiser's tsc parser needs. swc reads
    // the sources instead, and it reports type-only imports as dependencies too (dependencyTypes
    // "type-only"), which is what this check wants.
    parser: 'swc',
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
