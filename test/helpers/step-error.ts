// The StepError a promise rejects with; a resolve, or any other error, fails the test.
import { StepError } from '../../lib/errors.ts';

export function stepErrorOf(p: Promise<unknown>): Promise<StepError> {
  return p.then(
    () => {
      throw new Error('expected a StepError');
    },
    (e: unknown) => {
      if (e instanceof StepError) return e;
      throw e;
    },
  );
}
