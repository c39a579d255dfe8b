/** A valid `createPayment` input, shared by the client's tests. */
export const orderInput = Object.freeze({
  orderNo: 'order-42',
  tokenSymbol: 'USDT',
  amount: '12.50',
  expireSec: 900,
  notifyUrl: 'https://shop.example/wh',
});
