//! What the screens compute, pure and tested natively: which failures the list shows and in
//! which order, the graph canvas's model (layout, colours, labels), zoom, pan and culling, and
//! the raster drawn when tens of thousands of nodes are on screen.

pub mod failures;
pub mod graph_model;
pub mod raster;
pub mod viewport;
