// Makes `tsc -p tsconfig.integrations.json` (make compile) fail when the implementation of
// retrycore/integrations disagrees with its public declarations (integrations.d.ts), as
// lib/conforms.ts does for the main API.

import type * as Declared from '../../integrations';
import * as Impl from './index.js';

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;

export const conforms: {
  names: Same<keyof typeof Declared, keyof typeof Impl>;
  wrapFetch: typeof Impl.wrapFetch extends typeof Declared.wrapFetch ? true : false;
  interceptor: typeof Impl.interceptor extends typeof Declared.interceptor ? true : false;
  axiosAdapter: typeof Impl.axiosAdapter extends typeof Declared.axiosAdapter ? true : false;
  STACKING_CODE: typeof Impl.STACKING_CODE extends typeof Declared.STACKING_CODE ? true : false;
} = { names: true, wrapFetch: true, interceptor: true, axiosAdapter: true, STACKING_CODE: true };
