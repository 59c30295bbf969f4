// The tests' seeded generator is the rig's own (lib/protocol/seeded-random.ts): the same seed gives the same draws.
export { seededRandom as rng } from '../../lib/protocol/seeded-random';
