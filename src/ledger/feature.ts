/** The ledger's descriptor (src/feature.ts): its settings, routes, reconciliation task, `sibyl ledger`. */
import type { Feature } from '../feature.js';
import { type LedgerConfig, ledgerSettings } from './config.js';
import type { KeyNames } from './usage.js';

export interface Needs {
  config: { ledger: LedgerConfig };
  /** The usage report's key names, from the keys room (src/ports.ts). */
  ports: { keyNames: KeyNames };
}

export const ledgerFeature: Feature<{ ledger: typeof ledgerSettings }, Needs> = {
  name: 'ledger',
  tables: ['ledger_entries', 'balance_alerts'],
  settings: { ledger: ledgerSettings },
  async api(app, { ports }) {
    const { ledgerRoutes } = await import('./routes.js');
    ledgerRoutes(app, { keyNames: ports.keyNames });
  },
  async worker({ config, db, log }) {
    const { ledgerTasks } = await import('./tasks.js');
    return { tasks: ledgerTasks({ db, log, config: config.ledger }) };
  },
  commands: {
    ledger: {
      usage: ['  ledger reconcile                        check every ledger invariant'],
      run: async (io, action) =>
        (await import('./cli.js')).ledgerCommand(await io.database(), io.out, action),
    },
  },
};
