/** Stylesheets are imported for their effect: Bun's bundler emits them as a separate `.css` file. */
declare module "*.css";
