// Makes `tsc -p tsconfig.integrations.json` (make compile) fail when lib/metrics.ts disagrees
// with its public declarations (metrics.d.ts, what `retrycore/metrics` ships), as
// lib/conforms.ts does for the main API.

import type * as Declared from '../metrics';
import * as Impl from './metrics.js';

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;

export const conforms: {
  names: Same<keyof typeof Declared, keyof typeof Impl>;
  instrument: typeof Impl.instrument extends typeof Declared.instrument ? true : false;
  PrometheusExporter: typeof Impl.PrometheusExporter extends typeof Declared.PrometheusExporter ? true : false;
  OpenTelemetryExporter: typeof Impl.OpenTelemetryExporter extends typeof Declared.OpenTelemetryExporter ? true : false;
  markResend: Same<typeof Impl.markResend, typeof Declared.markResend>;
  RESEND_COUNT: Same<typeof Impl.RESEND_COUNT, typeof Declared.RESEND_COUNT>;
} = { names: true, instrument: true, PrometheusExporter: true, OpenTelemetryExporter: true, markResend: true, RESEND_COUNT: true };
