export { createPagesApiHandler, type PagesApiHandler, type PagesApiHandlerOptions } from './pages-api-handler.js';
export { createRouteHandler, type RouteHandler, type RouteHandlerOptions } from './route-handler.js';
