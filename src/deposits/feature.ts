/** The deposits' descriptor (src/feature.ts): its settings, the watcher task, `sibyl deposits`. */
import type { Feature } from '../feature.js';
import type { HistoricalService } from '../historical/index.js';
import type { PriceConfig, PriceService } from '../prices/index.js';
import { type DepositConfig, depositSettings } from './config.js';
import type { DepositWiring } from './wiring.js';

export interface Needs {
  config: { deposits: DepositConfig; prices: PriceConfig };
  ports: { prices: PriceService; historical: HistoricalService };
  /** The worker's test doubles: the prices at block time and the chain. */
  deposits?: Pick<DepositWiring, 'prices' | 'rpc'> | undefined;
}

export const depositsFeature: Feature<{ deposits: typeof depositSettings }, Needs> = {
  name: 'deposits',
  tables: ['deposits', 'deposit_cursors', 'deposit_unreadable', 'deposit_watcher'],
  settings: { deposits: depositSettings },
  async worker({ config, db, clock, log, ports, deposits }) {
    // None when the watcher is off.
    if (config.deposits.watch === null) return {};
    const { depositTasks } = await import('./wiring.js');
    return {
      tasks: depositTasks({
        db,
        clock,
        log,
        config: config.deposits,
        priceService: ports.prices,
        historical: ports.historical,
        ...deposits,
      }),
    };
  },
  commands: {
    deposits: {
      usage: [
        '  deposits list [--status pending|credited|unattributed|held|ignored] [--account ID] [--limit N]',
        '  deposits list --unreadable [--limit N]   transactions the watcher could not book, recorded once',
        "  deposits assign SIGNATURE ACCOUNT_ID [USD_PER_TOKEN]  credit a transaction's unattributed or held deposits, once",
        '  deposits rescan --before SIG | --since ISO   read a range of the chain again (nothing doubles)',
      ],
      async run(io, action, args) {
        const { depositsCommand } = await import('./cli.js');
        await depositsCommand(await io.database(), io.out, action, args, io.config);
        return true;
      },
    },
  },
};
