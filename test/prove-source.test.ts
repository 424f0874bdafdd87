// How `flags prove` names why a cited line was not hit, from the source around it: the condition
// (written over several lines too), an operand of a condition that `&&`/`||` skips, and the function
// literal that nothing called. The Go below is shaped as the cited lines are in v1.36.3
// (authentication.go Validate, admission.go Validate, authorization.go AddFlags, etcd's listener.go).
import { describe, expect, it } from 'vitest';
import {
  conditionOperand,
  earlyReturns,
  enclosingCondition,
  enclosingLiteral,
} from '../harness/prove/source.ts';

const go = `func (o *Options) Validate() []error {
	if o.RequestHeader != nil {
		if o.ClientCert != nil &&
			len(o.ClientCert.ClientCA) > 0 &&
			len(o.RequestHeader.AllowedNames) == 0 {
			ca, err := certutil.CertsFromFile(o.ClientCert.ClientCA)
		}
	}
	if a.PluginNames != nil &&
		(a.GenericAdmission.EnablePlugins != nil || a.GenericAdmission.DisablePlugins != nil) {
		errs = append(errs, fmt.Errorf("mutually exclusive"))
	}
	o.AreLegacyFlagsSet = func() bool {
		if old != nil && old() {
			return true
		}
		return fs.Changed(authorizationModeFlag)
	}
	defer func() {
		lg.Info("closed", o.Dir)
	}()
	return nil
}`.split('\n');
const at = (text: string) => go.findIndex((l) => l.includes(text)) + 1;

describe('prove: why a cited line was not hit, read from the source', () => {
  it('names a condition written over several lines by its first and last line', () => {
    expect(enclosingCondition(go, at('ca, err :='))).toEqual({
      line: 3,
      text: 'if o.ClientCert != nil &&',
      last: { line: 5, text: 'len(o.RequestHeader.AllowedNames) == 0 {' },
    });
    expect(enclosingCondition(go, at('fmt.Errorf("mutually'))!.line).toBe(9);
  });

  it('names the condition a line is an operand of, and the operator that skips it', () => {
    expect(conditionOperand(go, at('(a.GenericAdmission.EnablePlugins'))).toEqual({
      line: 9,
      text: 'if a.PluginNames != nil &&',
      op: '&&',
    });
    expect(conditionOperand(go, at('len(o.ClientCert.ClientCA) > 0'))).toEqual({
      line: 3,
      text: 'if o.ClientCert != nil &&',
      op: '&&',
    });
    expect(conditionOperand(go, at('ca, err :='))).toBeUndefined();
  });

  it('names the function literal a line is in, not a deferred one, nor the declared function', () => {
    expect(enclosingLiteral(go, at('return fs.Changed'))).toEqual({
      line: 13,
      text: 'o.AreLegacyFlagsSet = func() bool {',
    });
    expect(enclosingLiteral(go, at('lg.Info("closed"'))).toBeUndefined();
    expect(enclosingLiteral(go, at('ca, err :='))).toBeUndefined();
  });

  it('names the early return before a line, past a literal opened and closed on one line', () => {
    // validation.go:92-99 (validateServiceAccountTokenSigningConfig), whose `[]error{}` hid the return.
    const v = [
      'func validate(options *Options) []error {',
      '\tif len(options.ServiceAccountSigningEndpoint) == 0 {',
      '\t\treturn nil',
      '\t}',
      '',
      '\terrors := []error{}',
      '',
      '\tif len(options.ServiceAccountSigningKeyFile) != 0 {',
    ];
    expect(earlyReturns(v, 8)).toEqual([
      { line: 2, text: 'if len(options.ServiceAccountSigningEndpoint) == 0 {' },
    ]);
  });
});
