// An EC2 instance type's CPU architecture, by its name: a Graviton family has a 'g' after its
// generation (c7g, m7gd, r8g), and is arm64. Pure; the AMI, the node's Node build and the platform an
// image needs follow from it.
/** arm64 for Graviton types (c7g, m7g, t4g, c7gn, ...), else x86_64. */
export function architectureOf(instanceType: string): 'arm64' | 'x86_64' {
  return /^[a-z]+\d+[a-z]*g[a-z]*\./.test(instanceType) ? 'arm64' : 'x86_64';
}
