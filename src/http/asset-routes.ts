import type { FastifyInstance } from 'fastify';
import { findAsset } from '../pages/assets.js';

/** The pages' own CSS and JS, at /assets/{name}. URLs carry ?v={hash}, so they may be cached for long. */
export async function assetRoutes(app: FastifyInstance): Promise<void> {
  app.get('/assets/:name', async (request, reply) => {
    const asset = findAsset((request.params as { name: string }).name);
    if (!asset) return reply.code(404).type('text/plain; charset=utf-8').send('not found');
    const versioned = (request.query as { v?: string }).v === asset.hash;
    return reply
      .type(asset.type)
      .header('cache-control', versioned ? 'public, max-age=31536000, immutable' : 'public, max-age=300')
      .header('x-content-type-options', 'nosniff')
      .header('etag', `"${asset.hash}"`)
      .send(asset.body);
  });
}
