import { defineConfig } from 'tsup';
import { packageBuild } from '../../tsup.shared.js';

// Neutral, for the Node and the Edge runtime alike. Core stays external, so Next.js resolves it with the
// runtime's export conditions (its Web Crypto build on the Edge).
export default defineConfig(packageBuild({ platform: 'neutral', target: 'es2022' }));
