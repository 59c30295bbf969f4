// Every workflow the rig's workers run. Temporal bundles this file (and what it imports) into the
// deterministic workflow sandbox: no Node built-ins, no I/O, no clocks outside @temporalio/workflow.
export { benchCampaign } from './campaign';
export { rigWatchdog } from './watchdog';
export { hostLease } from './host-lease';
