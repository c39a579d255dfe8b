/** The smallest app that serves the three kinds of webhook route; nothing here is specific to the tests. */
export default {
  reactStrictMode: true,
};
