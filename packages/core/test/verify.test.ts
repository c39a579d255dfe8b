import { describe } from 'vitest';
import { verificationSuite } from './suites/verification-suite.js';

describe('verifyWebhook (node:crypto backend)', verificationSuite);
