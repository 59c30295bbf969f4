// Temporal servers for tests, always from the binaries `npm ci` installed (existing-path): the
// time-skipping test server and the CLI's dev server. Nothing is downloaded at run time.
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { toolPath } from '../../lib/tools/binaries';
import { RIG_SEARCH_ATTRIBUTES } from '../../workflows/search-attributes';

// Worker logs at WARN: test output shows failures, not every bundle and state change.
try {
  Runtime.install({ logger: new DefaultLogger('WARN') });
} catch {
  // already installed by another harness import in this process
}

export function timeSkippingEnv(): Promise<TestWorkflowEnvironment> {
  return TestWorkflowEnvironment.createTimeSkipping({
    server: { executable: { type: 'existing-path', path: toolPath('temporal-test-server') } },
  });
}

export function localDevEnv(): Promise<TestWorkflowEnvironment> {
  return TestWorkflowEnvironment.createLocal({
    server: {
      executable: { type: 'existing-path', path: toolPath('temporal') },
      ip: '127.0.0.1',
      searchAttributes: RIG_SEARCH_ATTRIBUTES,
    },
  });
}
