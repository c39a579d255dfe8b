/**
 * Makes `instanceof` recognise an error class by a registered brand instead of prototype identity. With both
 * the ESM and the CJS build loaded (or two installed copies of the package), an error made by one copy must
 * still be recognised by the other, or a `PaymentRejectedError` thrown from a handler compiled against one
 * copy would be taken for a transient failure by the other.
 */
export function brandErrorClass(errorClass: abstract new (...args: never[]) => Error, name: string): void {
  const brand = Symbol.for(`@service-pay/core/${name}`);
  Object.defineProperty(errorClass.prototype, brand, { value: true });
  Object.defineProperty(errorClass, Symbol.hasInstance, {
    value: (value: unknown) =>
      typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[brand] === true,
  });
}
