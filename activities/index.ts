// Every activity the rig's workers run, typed for workflows through proxyActivities<typeof activities>.
export {};
