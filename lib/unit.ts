// The one place a component's systemd unit is named: hardwire runs each component as <name>.service.

/** The systemd unit that runs a component. */
export function unitOf<C extends string>(component: C): `${C}.service` {
  return `${component}.service`;
}
