// menu.js — the pages and who sees them in the menu. The menu follows the
// caller's role; the API stays the authority: a page forced by URL shows
// the API's 403 and no data.

/** admins are the roles that see the admin pages (the API decides what each may do there). */
export const adminRoles = ['superadmin', 'admin'];

/** isAdmin answers whether the role sees the admin pages. */
export const isAdmin = (role) => adminRoles.includes(role);

/** auditRoles read the audit trail: auditors all of it, domain auditors their domain's records. */
export const auditRoles = ['superadmin', 'auditor', 'domain-auditor'];

/** sections of the menu: items are {href, label, roles?} (no roles: everyone). */
export const menu = [
  {
    title: 'Work',
    items: [
      { href: '/', label: 'Start' },
      { href: '/dashboard', label: 'Dashboard' },
      { href: '/sessions', label: 'Sessions' },
      { href: '/data', label: 'Data' },
      { href: '/environments', label: 'Environments' },
      { href: '/agents', label: 'Agent Summary' },
      { href: '/statistics', label: 'Statistics' },
    ],
  },
  {
    title: 'Administration',
    roles: [...adminRoles, 'auditor', 'domain-auditor'],
    items: [
      { href: '/admin/users', label: 'Users', roles: adminRoles },
      { href: '/admin/resources', label: 'Resources', roles: adminRoles },
      { href: '/admin/policies', label: 'Resource Policy', roles: adminRoles },
      { href: '/admin/scheduler', label: 'Scheduler', roles: adminRoles },
      { href: '/admin/audit', label: 'Audit', roles: auditRoles },
      { href: '/admin/settings', label: 'Configurations', roles: ['superadmin'] },
      { href: '/admin/maintenance', label: 'Maintenance', roles: ['superadmin'] },
      { href: '/admin/information', label: 'Information', roles: ['superadmin'] },
    ],
  },
];

/** visibleMenu is the menu the role sees. */
export function visibleMenu(role) {
  return menu
    .filter((s) => !s.roles || s.roles.includes(role))
    .map((s) => ({ ...s, items: s.items.filter((i) => !i.roles || i.roles.includes(role)) }))
    .filter((s) => s.items.length);
}
