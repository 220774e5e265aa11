/** Broker volume rules of a symbol (from the bridge's hello); the defaults are the common forex lot rules. */
export interface VolumeRules {
  step: number;
  min: number;
  max?: number;
}
export const DEFAULT_VOLUME_RULES: VolumeRules = { step: 0.01, min: 0.01 };
