import { calcPrice } from '@pydantic/genai-prices';
import type { CatalogEntry } from './model-catalog.ts';

export interface ModelPrice {
  /** USD per million tokens (the base tier). */
  input: number;
  output: number;
}

const MILLION = 1_000_000;
// Listed prices are those of a small call: long-context tiers only apply to the calls that reach them.
const SAMPLE = 1000;
const cache = new Map<string, ModelPrice | null>();

const maintained = (model: CatalogEntry, input: number, output: number) =>
  calcPrice({ input_tokens: input, output_tokens: output }, model.upstream, { providerId: model.priceProvider ?? model.provider });

/** The model's price: our catalog's where set, else the maintained @pydantic/genai-prices list, else null. */
export function priceOf(model: CatalogEntry): ModelPrice | null {
  if (model.price) return model.price;
  let price = cache.get(model.id);
  if (price === undefined) {
    const result = maintained(model, SAMPLE, SAMPLE);
    price = result ? { input: (result.input_price * MILLION) / SAMPLE, output: (result.output_price * MILLION) / SAMPLE } : null;
    cache.set(model.id, price);
  }
  return price;
}

/**
 * Per-token rates of a model whose maintained price is flat (not tiered by prompt length, not
 * depending on the date or time of day, no per-request fee; units we never report, such as cache
 * reads or web searches, count zero): its cost is then computed here, as the package computes it,
 * instead of matching the model in the package's data on every call.
 */
const flatRates = new Map<string, ModelPrice | null>();

function flatRatesOf(model: CatalogEntry): ModelPrice | null {
  let rates = flatRates.get(model.id);
  if (rates === undefined) {
    const result = maintained(model, SAMPLE, SAMPLE);
    const { input_mtok: input, output_mtok: output } = result?.model_price ?? {};
    const flat =
      result &&
      !Array.isArray(result.model.prices) &&
      typeof input === 'number' &&
      typeof output === 'number' &&
      Object.entries(result.model_price).every(([key, value]) => value === undefined || (typeof value === 'number' && !key.startsWith('requests')));
    rates = flat ? { input, output } : null;
    flatRates.set(model.id, rates);
  }
  return rates;
}

/** USD for a call (tiered prices included), or null when the model has no known price (the caller logs it loudly). */
export function costOf(model: CatalogEntry, inputTokens: number, outputTokens: number): number | null {
  if (model.price) return (inputTokens * model.price.input + outputTokens * model.price.output) / MILLION;
  if (priceOf(model) === null) return null;
  const rates = flatRatesOf(model);
  if (rates) return (rates.input * inputTokens) / MILLION + (rates.output * outputTokens) / MILLION;
  return maintained(model, inputTokens, outputTokens)?.total_price ?? null;
}
