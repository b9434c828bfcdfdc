import { Ajv2020 } from 'ajv/dist/2020.js';
import ajvFormats from 'ajv-formats';

/** ajv-formats is CommonJS: its default import is the plugin itself. */
const addFormats = ajvFormats as unknown as (ajv: Ajv2020) => void;

/**
 * The validator the tests check the OpenAPI document's schemas and examples with: JSON Schema 2020-12
 * with the formats the document uses (`uri`, `date-time`, `ipv4`, …) checked. A schema ajv would only
 * warn about (an unknown format, which it then ignores) fails instead, so no format goes unchecked.
 */
export function openApiAjv(): Ajv2020 {
  const fail = (...args: unknown[]) => {
    throw new Error(`ajv: ${args.map(String).join(' ')}`);
  };
  const ajv = new Ajv2020({
    strict: false,
    allErrors: true,
    logger: { log: () => {}, warn: fail, error: fail },
  });
  addFormats(ajv);
  return ajv;
}
