// The explicit hook for a test that is not about the instrument: a real calibration takes 1-2 min and
// the host to itself, and without one a `calibrate: true` campaign ends UNCALIBRATED whatever it
// measured. RIG_TEST_CALIBRATION_STAND_IN=<why> makes the campaign's own calibration step record a
// stand-in (calibration.json with `test_stand_in`: one case, "not measured") instead of measuring; a
// load node's calibration stays real. activities/calibrate.ts honours the variable, and such a file,
// only under RIG_TESTING=1 (`npm test` sets it), and refuses both anywhere else, naming the variable.
// A file that merely says calibrated is believed only when it covers the campaign (issue 47, item 2).
import { STAND_IN_ENV } from '../../activities/calibrate';
import { isTesting, TESTING_ENV } from '../../lib/tools/test-switch';

/**
 * The environment that asks for a stand-in, for the worker that runs the calibrate step (this process's
 * for an in-process worker, `childEnv` for a child one). Both need RIG_TESTING=1, required here.
 */
export function standInCalibrationEnv(why: string): NodeJS.ProcessEnv {
  if (!isTesting()) throw new Error(`standInCalibrationEnv: ${TESTING_ENV}=1 is not set, so the calibrate step would refuse ${STAND_IN_ENV}: run the file through npm test (scripts/run-tests.cjs sets it)`);
  return { [TESTING_ENV]: '1', [STAND_IN_ENV]: why };
}
