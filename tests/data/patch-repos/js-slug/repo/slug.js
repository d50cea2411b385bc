'use strict';

/** A URL slug of `text`: lower case, runs of other characters as one dash. */
function slugify(text, maxLength = 0) {
  let slug = String(text).normalize('NFKD').replace(/[\u0300-\u036f]/g, '');
  slug = slug.toLowerCase();
  slug = slug.replace(/[^a-z0-9]+/g, '-');
  slug = slug.replace(/^-+/, '');
  if (maxLength > 0 && slug.length > maxLength) {
    slug = slug.slice(0, maxLength);
  }
  return slug;
}

module.exports = { slugify };
