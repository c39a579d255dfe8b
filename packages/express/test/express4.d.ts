// The `express4` dev dependency is `npm:express@4`; its API is typed by the same @types/express here.
declare module 'express4' {
  import express = require('express');
  export = express;
}
