// `pnpm test` fails on an import loop, type-only imports included (a loop of types still ties
// the modules' meaning together, and was how validating an inventory loaded gate code).
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
      name: 'core-not-harness',
      severity: 'error',
      comment: 'The pipeline (core/) stands apart from the harness around it; it reads only the flag map, whose citations it renders.',
      from: { path: '^core/' },
      to: { path: '^harness/', pathNot: '^harness/flags/map\\.ts$' },
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
