/** Permission names and what each one opens (docs/api.md#permissions). */
export const PERMISSIONS = [
  'price',
  'batch',
  'historical',
  'ai',
  'schedule',
  'markets',
  'account',
  'keys',
] as const;

export type Permission = (typeof PERMISSIONS)[number];

export function isPermission(name: string): name is Permission {
  return (PERMISSIONS as readonly string[]).includes(name);
}
