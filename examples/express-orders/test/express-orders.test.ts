import { describeShop } from '@service-pay/example-shop-kit/testing';
import { startExpressShop } from './start-shop.js';

describeShop('express-orders', startExpressShop);
